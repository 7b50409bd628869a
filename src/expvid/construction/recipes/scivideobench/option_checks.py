"""The rules a question's text options must meet, in one place: when the QA generator writes them and
again when the refiner rewrites them.

Nine distractors, none a twin of the correct answer, no two twins of each other. What counts as a
twin is the validity audit's near-duplicate check (`expvid.audit.near_duplicate_pairs`): numbers
equal in value ("98 %" / "98%", "0.5" / ".5"), the same normal form (case, spacing, punctuation,
articles, plural: "answer." / "answer", "the beaker" / "Beakers"), and paraphrases by MiniLM
embedding that use the same words ("It cools the sample" / "It just cools the sample"), so a twin the
audit would flag in the release is refused while drafting, at both places at once. `TwinCheck` holds
the one embedding table of a build (each text is embedded once; the model loads on the first
paraphrase it has to compare). A problem is returned as text for the model (the reply is re-asked
with it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from expvid.audit.duplicates import DuplicatePair, Embedder, EmbeddingTable, near_duplicate_pairs
from expvid.construction.recipes.scivideobench.numeric_options import N_OPTIONS

_SPACES = re.compile(r"\s+")
_EDGES = " \t\n\"'“”‘’`.,;:!?"
#: The key of the correct answer among the options compared (distractors are "1".."9").
ANSWER = "0"


def option_key(text: str) -> str:
    """The text as emptiness and the answer-in-question rule see it (never for output)."""
    return _SPACES.sub(" ", text).strip(_EDGES).casefold()


@dataclass
class TwinCheck:
    """The audit's near-duplicate check over one question's options, with the build's embeddings.

    `embeddings` None compares normal forms and values only (no model)."""

    embeddings: EmbeddingTable | None = None

    @classmethod
    def with_model(cls, embedder: Embedder | None = None) -> TwinCheck:
        """A check with the packaged MiniLM model (or `embedder`), loaded on first use."""
        from expvid.audit.duplicates import default_embedder

        return cls(EmbeddingTable(embedder or default_embedder()))

    def pairs(self, answer: str, distractors: list[str]) -> list[DuplicatePair]:
        """Twin pairs among the answer ("0") and the non-empty distractors ("1".."9")."""
        options = {ANSWER: answer}
        options |= {str(i): text for i, text in enumerate(distractors, 1) if option_key(text)}
        return near_duplicate_pairs(options, embeddings=self.embeddings)


def option_problems(answer: str, distractors: list[str], twins: TwinCheck | None = None) -> list[str]:
    """What is wrong with `distractors` for `answer` (empty when nothing); `twins`: the build's check
    (default: normal forms and values, no embedding model)."""
    problems = []
    if not option_key(answer):
        problems.append("the correct answer is empty")
    if len(distractors) != N_OPTIONS - 1:
        problems.append(f"give exactly {N_OPTIONS - 1} distractors, got {len(distractors)}")
    for index, text in enumerate(distractors, 1):
        if not option_key(text):
            problems.append(f"distractor {index} is empty")
    if not option_key(answer):
        return problems
    for pair in (twins or TwinCheck()).pairs(answer, distractors):
        how = pair.how + (f" {pair.similarity:.2f}" if pair.similarity is not None else "")
        if pair.first == ANSWER:
            index = int(pair.second)
            problems.append(
                f"distractor {index} ({distractors[index - 1]!r}) is the correct answer itself ({how})"
            )
        else:
            first, second = int(pair.first), int(pair.second)
            problems.append(
                f"distractors {first} and {second} are the same option ({distractors[second - 1]!r}; {how})"
            )
    return problems
