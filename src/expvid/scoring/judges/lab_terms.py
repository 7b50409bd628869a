"""Common laboratory abbreviations and formulas, so "DMSO" = "dimethyl sulfoxide" without a model.

Whole-answer lookups only: an answer is replaced by its canonical term when the whole normalised
answer is a known name, never inside a longer phrase. Kept short and unambiguous on purpose:
an entry that could mean two things in a lab ("PC", "PS") is left out. The terms are in
`lab_terms.txt` beside this module.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from expvid.scoring.judges.normalise import normalise_answer


@cache
def _table() -> dict[str, str]:
    table: dict[str, str] = {}
    text = files(__package__).joinpath("lab_terms.txt").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        names = [name.strip() for name in line.split(" = ")]
        canonical = normalise_answer(names[0])
        for name in names:
            table[normalise_answer(name)] = canonical
    return table


def canonical_term(normalised: str) -> str:
    """The canonical form of a whole normalised answer, or the answer itself when unknown."""
    return _table().get(normalised, normalised)
