"""Cheap exact tests an offline judge tries before comparing embeddings.

A short answer that equals the gold one after normalising case, spacing and a final full stop, or
that ends on the same number as a numeric gold answer (within a relative tolerance), needs no
similarity model to be called right. Every offline stand-in for a paper's LLM judge uses these
same two tests, so they live here once.
"""

from __future__ import annotations

import re

#: Relative tolerance for "the same number" (1 %).
NUMERIC_TOLERANCE = 0.01
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def normalise(text: str) -> str:
    """Case-folded, runs of white space as one space, no final full stop."""
    return re.sub(r"\s+", " ", text).strip().casefold().rstrip(".")


def same_number(prediction: str, answer: str, tolerance: float = NUMERIC_TOLERANCE) -> bool:
    """The numeric `answer` equals the last number in `prediction` within `tolerance` (relative)."""
    if not _NUMBER.fullmatch(answer.strip()):
        return False
    found = _NUMBER.findall(prediction)
    if not found:
        return False
    gold, said = float(answer), float(found[-1])
    return abs(said - gold) <= tolerance * max(abs(gold), 1e-12)
