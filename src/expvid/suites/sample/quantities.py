"""Quantities in lab steps ("500 µL", "37 °C", "3 washes"): parsing, units and question wording.

The distractors drawn around a quantity are `quantity_distractors`' job (they are weighted over the
sample's scripts, which are checked against the wording here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

NUMBER_PATTERN = re.compile(r"(?P<value>-?\d+(?:\.\d+)?)(?P<sep>\s*)(?P<unit>.*)")

_VOLUME = {"nL", "µL", "mL", "L"}
_MASS = {"ng", "µg", "mg", "g", "kg"}
_CONCENTRATION = {"M", "mM", "µM", "nM", "mg/mL", "µg/mL"}
PERCENT = {"%", "mol%"}
TEMPERATURE = {"°C"}
_SPEED = {"x g", "rpm"}
_INVARIANT = {"min", "fps", "rpm", "equiv", "species"}
#: Word units of measured (not counted) amounts.
_MEASURED = {"min", "fps", "rpm", "equiv"}


@dataclass(frozen=True)
class Quantity:
    value: float
    unit: str
    sep: str  # "" for "70%", " " for "500 µL": distractors are written the same way
    written: str = ""  # the number as written ("1.50"): its decimals are kept

    def with_number(self, number: Decimal) -> str:
        """Another value written like this one (same decimals, separator and unit)."""
        return f"{number}{self.sep}{_inflect(self.unit, float(number))}"


def parse_quantity(text: str) -> Quantity:
    """Split "500 µL" into value and unit; `ValueError` naming the text if it has no leading number."""
    match = NUMBER_PATTERN.fullmatch(text.strip())
    if not match:
        raise ValueError(f"quantity {text!r} does not start with a number")
    return Quantity(float(match["value"]), match["unit"], match["sep"], match["value"])


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
    if unit in _CONCENTRATION or unit in PERCENT:
        return f"What concentration of {material} is used in this step?"
    if unit in TEMPERATURE:
        return "At what temperature is this step performed?"
    if unit in _SPEED:
        return f"At what speed is the {material} centrifuged?"
    raise ValueError(f"no question template for quantity {quantity!r}: author a quantity_question")


def is_counted(unit: str) -> bool:
    """Things counted in whole numbers ("3 washes", "1 drop", "24 wells", "2 species")."""
    return unit.isalpha() and len(unit) >= 3 and unit not in _MEASURED


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
