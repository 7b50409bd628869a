"""Ten options per question, placed by the item's own content.

The answer's letter and the distractors' order come from a hash of the item's uid, never from its
position among other items, so adding or removing questions moves no letter. Quantitative
distractors are made by `numeric_options` (the answer plus Gaussian noise, drawn so that no blind
statistic singles the answer out); text distractors pass `option_checks` at generation and again
after the refiner.
"""

from __future__ import annotations

import hashlib
import random

from expvid.construction.recipes.scivideobench.numeric_options import N_OPTIONS
from expvid.schema import OPTION_LETTERS

__all__ = ["N_OPTIONS", "answer_position", "place_options"]


def answer_position(uid: str) -> int:
    return int(hashlib.sha256(f"{uid}:answer".encode()).hexdigest(), 16) % N_OPTIONS


def place_options(uid: str, correct: str, distractors: list[str]) -> tuple[dict[str, str], str]:
    """(options A-J, answer letter): distractors in a uid-seeded order, the answer at its uid slot."""
    if len(distractors) != N_OPTIONS - 1:
        raise ValueError(f"expected {N_OPTIONS - 1} distractors, got {len(distractors)}")
    order = list(distractors)
    random.Random(hashlib.sha256(f"{uid}:order".encode()).hexdigest()).shuffle(order)
    position = answer_position(uid)
    order.insert(position, correct)
    return dict(zip(OPTION_LETTERS, order, strict=True)), OPTION_LETTERS[position]
