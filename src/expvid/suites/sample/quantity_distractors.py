"""Distractors for the quantities in lab steps ("500 µL", "37 °C", "3 washes").

ExpVid section 3.3: quantity distractors "lie in the same numeric range to mimic perceptual
errors". So distractors keep the unit, the decimals and the roundness of the true value and stay
near it: for measured amounts a geometric ladder of values with as many significant digits as the
true one, a fifth to a half apart ("539 mg" beside "431 mg", "345 mg"; "30 min" beside "20 min",
"40 min"); whole-number neighbours for counted things ("3 washes"); evenly spaced degrees for °C;
never above 100 for %.

Where the true value sits among the four is drawn over the places its neighbours allow, leaving out
a place where its text would be the only shortest or longest, the only one with its decimals or the
only roundest or least round ("1 h" among "0.4 h", "0.5 h", "0.7 h"); the places are weighted so
that over the sample's quantities each is equally likely (`_rank_weights`: "1 drop" can only be the
smallest, others make up for it). Drawing all three around the true value, as the sample once did,
left it in the middle and never the largest: a learned text-only model read 54% of the built
sample's 82 quantity items (chance 25%).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from decimal import Decimal
from functools import cache

from expvid.suites.sample.quantities import (
    NUMBER_PATTERN,
    PERCENT,
    TEMPERATURE,
    Quantity,
    is_counted,
    parse_quantity,
)
from expvid.suites.sample.scripts import load_scripts

#: Ratio between neighbouring measured amounts, less one (one draw per item).
_SPACING = (0.2, 0.45)
#: Distance between neighbouring counts or temperatures, as a share of the true value.
_EVEN_SPACING = (0.1, 0.25)
#: At most this far (°C) from the true temperature.
_TEMPERATURE_RANGE = 40


def quantity_distractors(quantity: str, rng: random.Random, count: int = 3) -> list[str]:
    """`count` distinct wrong quantities in the same unit, decimals, roundness and numeric range as
    `quantity`; the true value's place among them is drawn with `_rank_weights`."""
    sets = _option_sets(quantity, rng, count)
    ranks = sorted(sets)
    weights = _rank_weights() if count == 3 else (1.0,) * (count + 1)
    rank = rng.choices(ranks, weights=[weights[r] for r in ranks])[0]
    chosen = list(sets[rank])
    rng.shuffle(chosen)
    return chosen


def _option_sets(quantity: str, rng: random.Random, count: int) -> dict[int, list[str]]:
    """Place of the true value among the options (0: the smallest) -> the distractors that put it
    there: its nearest neighbours on its grid, on each side. A place where the true value would be
    the only shortest or longest text ("10 min" above "4 min", "6 min", "8 min") is left out while
    another is possible."""
    parsed = parse_quantity(quantity)
    truth = parsed.with_number(Decimal(parsed.written))
    below, above = _neighbours(parsed, rng, count)
    if len(below) + len(above) < count:  # too close to 0 or 100% for values as round: allow rounder ones
        below, above = _neighbours(parsed, rng, count, rounder=True)
    sets = {
        r: [parsed.with_number(v) for v in [*below[:r], *above[: count - r]]]
        for r in range(count + 1)
        if len(below) >= r and len(above) >= count - r
    }
    if not sets:
        raise ValueError(f"could not find {count} distractors for quantity {quantity!r}")
    plain = {r: texts for r, texts in sets.items() if not _stands_out(truth, texts)}
    return plain or sets


def _neighbours(
    quantity: Quantity, rng: random.Random, count: int, *, rounder: bool = False
) -> tuple[list[Decimal], list[Decimal]]:
    """Values below (nearest first) and above (nearest first) the true one (`rounder`: values
    rounder than it allowed, where too few others fit)."""
    value = Decimal(quantity.written)
    counted = value == value.to_integral_value() and is_counted(quantity.unit)
    if counted or quantity.unit in TEMPERATURE:
        return _even_steps(quantity, value, counted, rng, count)
    ratio = 1 + rng.uniform(*_SPACING)
    digits = _significant(quantity.written)
    ceiling = Decimal(100) if quantity.unit in PERCENT else None
    below = _ladder(value, 1 / ratio, digits, lambda v: v > 0 and v >= value / Decimal("4.5"), count, rounder)
    above = _ladder(
        value,
        ratio,
        digits,
        lambda v: (ceiling is None or v <= ceiling) and v <= value * Decimal("4.5"),
        count,
        rounder,
    )
    return below, above


def _ladder(
    value: Decimal, ratio: float, digits: int, keep: Callable[[Decimal], bool], count: int, rounder: bool
) -> list[Decimal]:
    """Up to `count` values away from `value` by `ratio` each, rounded to `digits` significant
    digits (as round as the true value), each distinct from the last."""
    found: list[Decimal] = []
    current = float(value)
    for _ in range(4 * count):
        current *= ratio
        if current <= 0:
            break
        rounded = _round_to(current, digits)
        if not keep(rounded):
            break
        if not rounder and _significant(str(rounded)) < digits:  # "340" beside "539": rounder
            continue
        if rounded != value and rounded not in found:
            found.append(rounded)
            current = float(rounded)
        if len(found) == count:
            break
    return found


def _round_to(value: float, digits: int) -> Decimal:
    """`value` with `digits` significant digits, written without an exponent or trailing zeros
    after the point ("0.0700" -> "0.07", "1.20E+3" -> "1200")."""
    exponent = math.floor(math.log10(value)) - digits + 1
    rounded = Decimal(repr(value)).quantize(Decimal(1).scaleb(exponent)) if exponent < 0 else None
    if rounded is None:
        magnitude = 10**exponent
        return Decimal(round(value / magnitude) * magnitude)
    return rounded.normalize() if rounded != rounded.to_integral_value() else Decimal(int(rounded))


def _even_steps(
    quantity: Quantity, value: Decimal, counted: bool, rng: random.Random, count: int
) -> tuple[list[Decimal], list[Decimal]]:
    """Counted things: whole numbers a step apart ("24 wells": 18, 21 | 27, 30); °C: degrees on the
    true value's grid a step apart, at most `_TEMPERATURE_RANGE` away."""
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    grid = Decimal(1).scaleb(exponent)
    if exponent == 0 and value:
        while value % (grid * 10) == 0:  # "-80": tens
            grid *= 10
    if not counted:  # degrees: a grid fine enough for the neighbours to stay within range
        while grid > 1 and count * grid > _TEMPERATURE_RANGE:
            grid /= 10
    share = rng.uniform(*_EVEN_SPACING)
    step = max(1, round(float(abs(value)) * share / float(grid)))
    if not counted:
        step = max(1, min(step, int(_TEMPERATURE_RANGE / count / float(grid)) - 1))  # room for a skip
    units = int(value / grid)

    def side(direction: int) -> list[Decimal]:
        found: list[Decimal] = []
        current = units
        for _ in range(count):
            current += direction * step
            if not counted and units % 10 and current % 10 == 0:
                current += direction  # not rounder than the true value
            number = (current * grid).quantize(Decimal(1).scaleb(min(exponent, 0)))
            if counted and number <= 0:
                break
            found.append(number)
        return found

    return side(-1), side(+1)


def _stands_out(truth: str, distractors: list[str]) -> bool:
    """The true value's text alone the shortest or the longest, alone in its decimals, or alone the
    roundest or the least round (significant digits)."""
    for measure in (len, _decimals, _significant):
        others = [measure(text) for text in distractors]
        mine = measure(truth)
        if mine < min(others) or mine > max(others):
            return True
    return False


def _number_text(text: str) -> str:
    match = NUMBER_PATTERN.fullmatch(text.strip())
    return match["value"].lstrip("-") if match else text


def _decimals(text: str) -> int:
    return len(_number_text(text).partition(".")[2])


def _significant(text: str) -> int:
    """Significant digits as written ("500" 1, "539" 3, "0.50" 2)."""
    number = _number_text(text)
    digits = number.replace(".", "").lstrip("0")
    return len(digits if "." in number else digits.rstrip("0")) or 1


@cache
def _rank_weights() -> tuple[float, ...]:
    """Weights of the four places, fitted so that over the quantities of the sample's protocols each
    place is equally likely. Some quantities allow only some places ("1 drop" can only be the
    smallest, "10 min" not the largest), so drawing uniformly among the allowed places would make
    "the smallest" right more often than chance; the other quantities make up for them. Fitted by
    iterative proportional fitting over a few draws of each quantity."""
    allowed = [
        sorted(_option_sets(step.quantity, random.Random(f"weights:{draw}"), 3))
        for script in load_scripts()
        for step in script.steps
        for draw in range(4)
    ]
    weights = [1.0] * 4
    for _ in range(200):
        share = [0.0] * 4
        for places in allowed:
            total = sum(weights[r] for r in places)
            for r in places:
                share[r] += weights[r] / total
        weights = [w * (len(allowed) / 4) / max(s, 1e-9) for w, s in zip(weights, share, strict=True)]
    top = max(weights)
    return tuple(round(w / top, 6) for w in weights)
