"""Numbers with units, compared by value: "37 °C" = "37°C", "1 mL" = "1000 µL", "37 °C" != "42 °C".

Sentence embeddings put "37 °C" and "42 °C" almost on top of each other, so whenever the gold
answer holds a number the offline judge compares quantities first and lets a mismatch decide.
A quantity is a value with an optional unit; units are folded to a dimension and a factor to
the dimension's base unit. A number without a unit matches the same number in any unit ("37"
for "37 °C"), because the blank's context usually supplies the unit.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from expvid.scoring.judges.normalise import NUMBER_WORDS

#: alias -> (dimension, factor to the base unit). Aliases are matched after `unicode_fold`.
_UNITS: dict[str, tuple[str, float]] = {}


def _add(dimension: str, factor: float, *aliases: str) -> None:
    for alias in aliases:
        _UNITS[alias] = (dimension, factor)


_add("volume", 1.0, "l", "liter", "liters", "litre", "litres")
_add("volume", 1e-3, "ml", "milliliter", "milliliters", "millilitre", "millilitres", "cc")
_add("volume", 1e-6, "μl", "ul", "microliter", "microliters", "microlitre", "microlitres")
_add("volume", 1e-9, "nl", "nanoliter", "nanoliters")
_add("mass", 1.0, "g", "gram", "grams")
_add("mass", 1e3, "kg", "kilogram", "kilograms")
_add("mass", 1e-3, "mg", "milligram", "milligrams")
_add("mass", 1e-6, "μg", "ug", "microgram", "micrograms")
_add("mass", 1e-9, "ng", "nanogram", "nanograms")
_add("time", 1.0, "s", "sec", "secs", "second", "seconds")
_add("time", 60.0, "min", "mins", "minute", "minutes")
_add("time", 3600.0, "h", "hr", "hrs", "hour", "hours")
_add("time", 86400.0, "d", "day", "days")
_add("time", 604800.0, "wk", "week", "weeks")
_add("temperature_c", 1.0, "°c", "℃", "degrees celsius", "degree celsius", "degrees c", "celsius", "c")
_add("temperature_k", 1.0, "k", "kelvin")
_add("concentration", 1.0, "molar", "mol/l")
_add("concentration", 1e-3, "millimolar", "mmol/l")
_add("concentration", 1e-6, "micromolar")
_add("concentration", 1e-9, "nanomolar")
_add("length", 1e-2, "cm", "centimeter", "centimeters", "centimetre", "centimetres")
_add("length", 1.0, "meter", "meters", "metre", "metres")
_add("length", 1e-3, "millimeter", "millimeters", "millimetre", "millimetres")
_add("length", 1e-6, "micrometer", "micrometers", "micron", "microns")
_add("length", 1e-9, "nanometer", "nanometers")
_add("speed", 1.0, "rpm", "rev/min")
_add("acceleration", 1.0, "×g", "x g", "xg", "g-force", "rcf")
_add("fraction", 1.0, "%", "percent", "per cent")
_add("fraction", 1.0, "% w/v", "% v/v", "% w/w")
_add("voltage", 1.0, "v", "volt", "volts")
_add("voltage", 1e-3, "mv", "millivolt", "millivolts")
_add("current", 1e-3, "ma", "milliampere", "milliamperes")
_add("frequency", 1.0, "hz", "hertz")
_add("frequency", 1e3, "khz")
_add("power", 1.0, "w", "watt", "watts")
_add("pressure", 1.0, "pa")
_add("pressure", 1e3, "kpa")
_add("pressure", 101325.0, "atm")
_add("pressure", 1e5, "bar")
_add("ph", 1.0, "ph")

#: Units whose case carries meaning (mM millimolar vs mm millimetre); matched exactly as written.
_CASED_UNITS: dict[str, tuple[str, float]] = {
    "M": ("concentration", 1.0),
    "mM": ("concentration", 1e-3),
    "μM": ("concentration", 1e-6),
    "uM": ("concentration", 1e-6),
    "nM": ("concentration", 1e-9),
    "m": ("length", 1.0),
    "mm": ("length", 1e-3),
    "μm": ("length", 1e-6),
    "um": ("length", 1e-6),
    "nm": ("length", 1e-9),
}

_ALIASES = sorted({*_UNITS, *(alias.casefold() for alias in _CASED_UNITS)}, key=len, reverse=True)
_NUMBER = (
    r"(?<![\w.^])(?:10\s*\^\s*(-?\d+)|(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*(?:×|x|\*)\s*10\s*\^\s*(-?\d+))?)"
)
_UNIT = "|".join(re.escape(alias) for alias in _ALIASES)
_QUANTITY = re.compile(rf"(?:(ph)\s*)?{_NUMBER}(?:\s*({_UNIT})(?![a-z]))?", re.IGNORECASE)
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻−", "0123456789--")


@dataclass(frozen=True)
class Quantity:
    value: float  # as written, in the written unit
    dimension: str | None
    base_value: float  # in the dimension's base unit (= value when there is no unit)


def _fold(text: str) -> str:
    # Superscript exponents must survive NFKC's folding into plain digits ("10⁵" -> "10^5").
    text = re.sub(r"10([⁻−]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "10^" + m.group(1).translate(_SUPERSCRIPTS), text)
    text = text.replace("µ", "μ")
    text = unicodedata.normalize("NFKC", text)  # keeps case: "mM" is not "mm"
    text = re.sub(r"(?<=\d)\s*°\s*[cC]\b", " °C", text)
    words = [NUMBER_WORDS.get(word.casefold(), word) for word in re.split(r"(\s+)", text)]
    return "".join(words)


def _unit(written: str) -> tuple[str, float]:
    if written in _CASED_UNITS:
        return _CASED_UNITS[written]
    folded = written.casefold()
    if folded in _UNITS:
        return _UNITS[folded]
    # A cased unit written in another case ("MM", "Nm"): take the lower-case reading.
    return _CASED_UNITS.get(folded, _CASED_UNITS.get(written.lower(), ("unknown:" + folded, 1.0)))


def quantities(text: str) -> list[Quantity]:
    """Every number in `text` with its unit if one follows (and "pH 7" as a pH)."""
    found = []
    for match in _QUANTITY.finditer(_fold(text)):
        ph, power, digits, exponent, unit = match.groups()
        if power is not None:
            value = 10.0 ** int(power)
        else:
            value = float(digits.replace(",", ""))
            if exponent:
                value *= 10.0 ** int(exponent)
        if ph:
            unit = "ph"
        if unit:
            dimension, factor = _unit(unit)
            found.append(Quantity(value, dimension, value * factor))
        else:
            found.append(Quantity(value, None, value))
    return found


def _same(a: Quantity, b: Quantity) -> bool:
    if a.dimension is not None and b.dimension is not None:
        return a.dimension == b.dimension and math.isclose(a.base_value, b.base_value, rel_tol=1e-6)
    return math.isclose(a.value, b.value, rel_tol=1e-6)


def quantities_match(gold: list[Quantity], predicted: list[Quantity]) -> bool:
    """True when the two lists pair up one-to-one (order free) with equal values."""
    if len(gold) != len(predicted):
        return False
    remaining = list(predicted)
    # Pair quantities with units first so a unit-less number cannot steal a unit's partner.
    for quantity in sorted(gold, key=lambda q: q.dimension is None):
        partner = next(
            (p for p in remaining if _same(quantity, p) and p.dimension == quantity.dimension), None
        )
        partner = partner or next((p for p in remaining if _same(quantity, p)), None)
        if partner is None:
            return False
        remaining.remove(partner)
    return True


def strip_quantities(text: str) -> str:
    """The text with its quantities removed (what is left to compare by meaning)."""
    return _QUANTITY.sub(" ", _fold(text))
