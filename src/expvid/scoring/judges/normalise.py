"""Text normalisation for comparing short scientific answers exactly.

Folds the differences that never change meaning in a blank answer: case, punctuation, articles,
hyphens vs spaces, Unicode compatibility forms (subscript/superscript digits "CO₂" = "CO2",
"cm²" = "cm2", micro sign vs Greek mu via NFKC), Greek letters vs their names
("β-actin" = "beta actin"), small number words ("three" = "3"), and a final plural "s".
"""

from __future__ import annotations

import re
import unicodedata

_GREEK = {
    "α": "alpha",
    "β": "beta",
    "γ": "gamma",
    "δ": "delta",
    "ε": "epsilon",
    "κ": "kappa",
    "λ": "lambda",
    "μ": "micro",
    "π": "pi",
    "σ": "sigma",
    "τ": "tau",
    "ω": "omega",
}
#: Number words as numerals, the same for every judge that reads numbers in text.
NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "once": "1 time",
    "twice": "2 times",
    "thrice": "3 times",
}
#: What a blank's answer may also say a number with ("eleven", "a single wash").
_NUMBER_WORDS = {**NUMBER_WORDS, "eleven": "11", "twelve": "12", "single": "1", "double": "2", "triple": "3"}
_ARTICLES = {"a", "an", "the"}
_DASHES = re.compile(r"[-‐‑‒–—―−/]")
_PUNCTUATION = re.compile(r"[^\w\s.%°+]")


def unicode_fold(text: str) -> str:
    """NFKC (₂ -> 2, ² -> 2, µ -> μ, full-width -> ASCII) then casefold."""
    return unicodedata.normalize("NFKC", text).casefold()


_IRREGULAR = {
    "mice": "mouse",
    "lice": "louse",
    "teeth": "tooth",
    "feet": "foot",
    "children": "child",
    "women": "woman",
    "men": "man",
    "nuclei": "nucleus",
    "foci": "focus",
    "fungi": "fungus",
    "bacilli": "bacillus",
    "cacti": "cactus",
    "bacteria": "bacterium",
    "mitochondria": "mitochondrion",
    "criteria": "criterion",
    "phenomena": "phenomenon",
    "larvae": "larva",
    "pupae": "pupa",
    "hyphae": "hypha",
    "algae": "alga",
    "vertebrae": "vertebra",
    "formulae": "formula",
    "indices": "index",
    "matrices": "matrix",
    "vertices": "vertex",
    "analyses": "analysis",
    "hypotheses": "hypothesis",
    "axes": "axis",
    "data": "datum",
    "media": "medium",
    "stimuli": "stimulus",
}
#: British -> American spellings by word ending (applied to both sides, so only consistency matters).
_SPELLING = (
    (re.compile(r"(?<=\w{3})our$"), "or"),  # tumour, behaviour, colour (not hour, flour)
    (re.compile(r"(?<=\w{2})is(e|ed|es|ing|ation|ations)$"), r"iz\1"),  # sterilise, stabilisation
    (re.compile(r"(?<=\w{2})ys(e|ed|es|ing)$"), r"yz\1"),  # analyse
    (re.compile(r"(?<=\w{2})tre$"), "ter"),  # litre, centimetre
    (re.compile(r"^aluminium$"), "aluminum"),
    (re.compile(r"sulph"), "sulf"),
    (re.compile(r"(?<=\w)ae"), "e"),  # haemoglobin, anaesthesia, leukaemia (not aerobic)
    (re.compile(r"^oe(?=[a-z])"), "e"),  # oedema, oestrogen, oesophagus
    (re.compile(r"^foet"), "fet"),
)


def _spell(word: str) -> str:
    for pattern, replacement in _SPELLING:
        word = pattern.sub(replacement, word)
    return word


def _depluralise(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalise_answer(text: str) -> str:
    """Canonical form for exact comparison; equal forms mean the same answer."""
    text = unicode_fold(text)
    for letter, name in _GREEK.items():
        text = text.replace(letter, f" {name} ")
    text = re.sub(r"\bnon[-‐‑–\s]+(?=[a-z])", "non", text)  # "non-toxic" = "non toxic" = "nontoxic"
    text = _DASHES.sub(" ", text)
    text = _PUNCTUATION.sub(" ", text)
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)  # keep decimal points only
    text = re.sub(r"(?<=\d)(?=[a-z°%])|(?<=[a-z°%])(?=\d)", " ", text)  # "37°c" -> "37 °c"
    words = [_NUMBER_WORDS.get(w, w) for w in text.split()]
    words = [_spell(_depluralise(w)) for w in " ".join(words).split() if w not in _ARTICLES]
    return " ".join(words)


def squeeze(normalised: str) -> str:
    """The normalised form without spaces: "knock down" = "knockdown", "over night" = "overnight"."""
    return normalised.replace(" ", "")


def acronym_of(short: str, long: str) -> bool:
    """True when `short` (as written, e.g. "PBS") is the initials of `long` ("phosphate-buffered saline")."""
    short = short.strip()
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]{1,7}", short) or sum(c.isupper() for c in short) < 2:
        return False
    words = [
        w for w in re.split(r"[\s\-‐–/]+", unicode_fold(long)) if w and w not in {"of", "and", "the", "a"}
    ]
    if len(words) < 2:
        return False
    return "".join(w[0] for w in words) == short.casefold()
