"""Ten options per question, placed by the item's own content.

Quantitative distractors are the answer plus Gaussian noise (SciVideoBench section 2.2), drawn from a
generator seeded by the item's draft key, rounded to the answer's decimals, each at least one display
step from the answer and from each other (a distractor that rounds to the answer would be a second
right answer). The answer's letter and the distractors' order come from a hash of the item's uid,
never from its position among other items, so adding or removing questions moves no letter.
"""

from __future__ import annotations

import hashlib
import random

from expvid.schema import OPTION_LETTERS

N_OPTIONS = 10


def number_text(value: float, decimals: int, unit: str | None) -> str:
    text = f"{value:.{decimals}f}"
    return f"{text} {unit}".strip() if unit else text


def gaussian_distractors(value: float, decimals: int, *, relative_sigma: float, seed: str) -> list[float]:
    """Nine distinct values around `value`, never equal to it once rounded; positive when it is."""
    rng = random.Random(hashlib.sha256(seed.encode()).hexdigest())
    step = 10.0 ** (-decimals)
    sigma = max(abs(value) * relative_sigma, 3 * step)
    answer = round(value, decimals)
    chosen: list[float] = []
    tries = 0
    while len(chosen) < N_OPTIONS - 1:
        tries += 1
        if tries % 200 == 0:
            sigma *= 1.5  # few distinct values fit: widen
        candidate = round(value + rng.gauss(0.0, sigma), decimals)
        if abs(candidate - answer) < step / 2 or any(abs(candidate - c) < step / 2 for c in chosen):
            continue
        if value > 0 and candidate <= 0:
            continue
        chosen.append(candidate)
    return chosen


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
