"""Word matching for the build's text rules: whole words and their lemmas, never prefixes.

"Is this target in the narration?", "is this answer in the question?", "is this distractor spoken in
the clip?" are all asked of words, not characters: a five-letter prefix made "P1000 micropipette" look
mentioned in "Add 500 microliters" ("micro" starts "microliters"). Here a word matches another when
they are the same word or the same lemma: a small, deterministic English folding of inflections
(plural -s/-es/-ies, -ing, -ed; "pipettes" = "pipette", "aspirating" = "aspirate", "washed" = "wash"),
not a stemmer that would merge "micropipette" with "micro". Numbers and identifiers ("P1000", "0.5",
"24-well") must match exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_WORD = re.compile(r"[0-9A-Za-zµα-ωΑ-Ω]+(?:[.,][0-9]+)*")

#: Words that say nothing about which thing is meant (function words and the generic lab words of the
#: G.1.1 exclusions); they never make two texts "share" content.
STOPWORDS = frozenset(
    {
        "a", "an", "the", "of", "in", "on", "at", "to", "into", "onto", "from", "with", "without", "by",
        "for", "and", "or", "as", "is", "are", "be", "been", "was", "were", "it", "its", "this", "that",
        "these", "those", "each", "all", "some", "any", "then", "than", "which", "what", "who", "how",
        "when", "where", "while", "after", "before", "during", "until", "so", "not", "no", "do", "does",
        "used", "using", "use", "step", "process", "video", "shown", "being", "performed", "new", "fresh",
        "one", "once", "twice", "about", "approximately", "make", "sure", "your", "you", "we", "our",
    }
)  # fmt: skip
GENERIC = frozenset(
    {
        "solution", "liquid", "fluid", "sample", "reagent", "mixture", "material", "substance", "chemical",
        "stuff", "tube", "container", "vessel", "tool", "equipment", "instrument", "device", "apparatus",
        "item", "object", "thing", "water", "buffer", "laboratory", "lab",
    }
)  # fmt: skip


def words(text: str) -> list[str]:
    """Case-folded words and numbers of `text` ("0.5", "P1000", "24", "well")."""
    return [w.casefold() for w in _WORD.findall(text)]


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """A matching key shared by a word's inflections (see the module docstring); numbers unchanged.

    Not a dictionary lemma: after folding -s/-es/-ies/-ing/-ed, a final "e" and a final doubled
    letter are dropped too, so "rinse"/"rinsing", "pipette"/"pipetted"/"pipettes" and "stir"/"stirred"
    share a key. Only keys are compared, never shown.
    """
    w = word.casefold()
    if len(w) <= 3 or any(ch.isdigit() for ch in w):
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    else:
        for suffix in ("ing", "ed"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1].isalpha():
        w = w[:-1]
    return w


def content_lemmas(text: str, *, generic: bool = False) -> set[str]:
    """Lemmas of the words that identify something (stopwords out; generic lab words out unless asked)."""
    found = set()
    for word in words(text):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        value = lemma(word)
        if not generic and (value in GENERIC or word in GENERIC):
            continue
        found.add(value)
    return found


def lemma_set(text: str) -> set[str]:
    return {lemma(w) for w in words(text)}


def mentioned_in(phrase: str, text: str) -> bool:
    """Every identifying word of `phrase` occurs in `text` as the same word or lemma (a phrase of only
    generic words must occur whole). "P1000 micropipette" is not mentioned in "Add 500 microliters"."""
    needed = content_lemmas(phrase)
    if not needed:
        needed = content_lemmas(phrase, generic=True)
    if not needed:
        return False
    return needed <= lemma_set(text)


def contains_phrase(text: str, phrase: str) -> bool:
    """`phrase` occurs in `text` as whole words (lemmas compared word by word, in order)."""
    wanted = [lemma(w) for w in words(phrase)]
    if not wanted:
        return False
    have = [lemma(w) for w in words(text)]
    n = len(wanted)
    return any(have[i : i + n] == wanted for i in range(len(have) - n + 1))


def overlap(a: Iterable[str], b: set[str]) -> int:
    return sum(1 for x in set(a) if x in b)
