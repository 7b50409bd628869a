"""Quantities in lab steps ("500 µL", "37 °C", "3 washes"): question wording and distractors.

ExpVid section 3.3: quantity distractors "lie in the same numeric range to mimic perceptual
errors". So distractors keep the unit and stay near the true value: common lab temperatures for
°C, small neighbours for counts, nearby multiples for everything else, never above 100 for %.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

_PATTERN = re.compile(r"(?P<value>-?\d+(?:\.\d+)?)(?P<sep>\s*)(?P<unit>.*)")

_VOLUME = {"nL", "µL", "mL", "L"}
_MASS = {"ng", "µg", "mg", "g", "kg"}
_CONCENTRATION = {"M", "mM", "µM", "nM", "mg/mL", "µg/mL"}
_PERCENT = {"%", "mol%"}
_TEMPERATURE = {"°C"}
_SPEED = {"x g", "rpm"}
_LAB_TEMPERATURES = (-80, -20, 4, 25, 30, 37, 42, 56, 60, 65, 72, 80, 95, 100, 120)
_INVARIANT = {"min", "fps", "rpm", "equiv", "species"}
_FACTORS = (0.5, 2.0, 1.5, 0.75, 0.25, 3.0, 4.0, 1.25, 2.5)


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str
    sep: str  # "" for "70%", " " for "500 µL": distractors are written the same way

    def with_value(self, value: float) -> str:
        return f"{_format_number(value)}{self.sep}{_inflect(self.unit, value)}"


def parse_quantity(text: str) -> Quantity:
    """Split "500 µL" into value and unit; `ValueError` naming the text if it has no leading number."""
    match = _PATTERN.fullmatch(text.strip())
    if not match:
        raise ValueError(f"quantity {text!r} does not start with a number")
    return Quantity(float(match["value"]), match["unit"], match["sep"])


def quantity_question(quantity: str, material: str, override: str | None) -> str:
    """The question for a quantity step: the authored one, else a template chosen by unit.

    Counts and unusual units have no safe template, so they must be authored (`ValueError`).
    """
    if override:
        return override
    unit = parse_quantity(quantity).unit
    if unit in _VOLUME:
        return f"What volume of {material} is used in this step?"
    if unit in _MASS:
        return f"How much {material} is used in this step?"
    if unit in _CONCENTRATION or unit in _PERCENT:
        return f"What concentration of {material} is used in this step?"
    if unit in _TEMPERATURE:
        return "At what temperature is this step performed?"
    if unit in _SPEED:
        return f"At what speed is the {material} centrifuged?"
    raise ValueError(f"no question template for quantity {quantity!r}: author a quantity_question")


def quantity_distractors(quantity: str, rng: random.Random, count: int = 3) -> list[str]:
    """`count` distinct wrong quantities in the same unit and numeric range as `quantity`."""
    parsed = parse_quantity(quantity)
    truth = parsed.with_value(parsed.value)
    candidates = _candidates(parsed)
    rng.shuffle(candidates)
    chosen: list[str] = []
    for value in candidates:
        text = parsed.with_value(value)
        if text != truth and text not in chosen:
            chosen.append(text)
        if len(chosen) == count:
            return chosen
    raise ValueError(f"could not find {count} distractors for quantity {quantity!r}")


def _candidates(quantity: Quantity) -> list[float]:
    value, unit = quantity.value, quantity.unit
    if unit in _TEMPERATURE:
        nearest = sorted(_LAB_TEMPERATURES, key=lambda t: (abs(t - value), t))
        near = [float(t) for t in nearest if t != value and abs(t - value) <= 40][:5]
        return near + [value + 10, value - 10, value + 20, value - 20][: max(0, 4 - len(near))]
    is_count = value.is_integer() and value <= 12 and unit not in _VOLUME | _MASS | _CONCENTRATION | _PERCENT
    if is_count:
        return [v for v in (value + 1, value + 2, value - 1, value + 3, value * 2, value - 2) if v > 0]
    values = [_nice(value * factor, like=value) for factor in _FACTORS]
    if unit in _PERCENT:
        nearby = (value + 5, value - 5) if value >= 10 else ()
        values = [v for v in values if v <= 100] + [v for v in nearby if 0 < v <= 100]
    return [v for v in values if v > 0]


def _inflect(unit: str, value: float) -> str:
    """Counted nouns agree with the number ("1 wash", "3 washes"); unit symbols never change."""
    if not unit.isalpha() or len(unit) < 3 or unit in _INVARIANT:
        return unit
    singular = unit
    if unit.endswith(("ses", "shes", "ches", "xes")):
        singular = unit[:-2]
    elif unit.endswith("s"):
        singular = unit[:-1]
    if value == 1:
        return singular
    return singular + ("es" if singular.endswith(("s", "sh", "ch", "x")) else "s")


def _nice(value: float, *, like: float) -> float:
    """Round to two significant figures, and to a multiple of 5 when the true value is one
    (a 300 µL step gets 150/450/600 µL distractors, not 225 or 375)."""
    if value <= 0:
        return value
    magnitude = 10 ** (math.floor(math.log10(value)) - 1)
    rounded = round(value / magnitude) * magnitude
    if like >= 10 and like % 5 == 0 and rounded >= 10:
        rounded = round(rounded / 5) * 5
    return float(round(rounded, 6))


def _format_number(value: float) -> str:
    if value.is_integer():
        return str(int(value))
    if abs(value) >= 100:
        return str(round(value))
    text = f"{value:.3g}"
    return text if "e" not in text else f"{value:.4f}".rstrip("0").rstrip(".")
