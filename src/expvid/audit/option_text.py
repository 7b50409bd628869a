"""What an option's text says, read once: its normal form, its number and unit, its format.

Three readings feed every solver and check of the audit:

- `option_key`: the text with everything folded that never makes two options different answers:
  case, spacing, punctuation, articles, hyphens, a final plural, British spellings, Unicode forms
  (`expvid.scoring.judges.normalise.normalise_answer`, the offline judge's own normal form), and a
  unit's spacing ("98 %" = "98%"). Two options with one key are the same answer written twice.
- `parse_number`: an option that is one number, with an optional unit ("2.5 mL", "1,500 rpm",
  ".5", "1/2", "3 × 10^5 cells", "-20 °C"), as a value in the unit's base (`quantities`: "1 mL" =
  "1000 µL") and how it is written (decimals, significant digits). "About 30 min" is a number;
  "Centrifuge for 30 min" is not.
- `format_signature`: how the option is written, feature by feature (decimals, unit as written,
  space before the unit, thousands separator, final punctuation, initial case, brackets), for the
  solver that picks the option written unlike the others.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from expvid.scoring.judges.normalise import normalise_answer
from expvid.scoring.judges.quantities import quantities

_APPROX = re.compile(
    r"^\s*(?:approximately|approx\.?|about|around|roughly|nearly|~|≈|ca\.?)\s*", re.IGNORECASE
)
_NUMBER = re.compile(
    r"(?P<sign>[-−–+]?)\s*(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?"
    r"(?:\s*(?:×|x|\*)\s*10\s*\^?\s*(?P<exp>[-−]?\d+))?"
)
_UNIT_TEXT = re.compile(r"^[^\W\d_]?[\w°%µμ/·.\-^²³ ]{0,24}$")
_FINAL_PUNCTUATION = re.compile(r"[.!?;:,]+$")


@dataclass(frozen=True)
class Number:
    """One option read as a number: value in its unit's base, and how it was written."""

    value: float
    #: "volume", "temperature_c", ... (`quantities`); "text:<unit>" for a unit it does not know
    #: ("cells", "fold"); None without a unit.
    dimension: str | None
    #: The unit exactly as written ("mL", " %", ""), spacing included.
    unit_written: str
    decimals: int
    significant: int
    thousands_separator: bool


def option_key(text: str) -> str:
    """The option's normal form (see the module docstring); equal keys are the same answer."""
    return _key(text)


@lru_cache(maxsize=200_000)
def _key(text: str) -> str:
    return normalise_answer(text).replace(" %", "%").replace(" °", "°")


def significant_digits(digits: str) -> int:
    """Significant digits of a number as written: "1500" 2, "2.50" 3, "0.75" 2, "30" 1, "0" 1."""
    digits = digits.replace(",", "").lstrip("+-")
    if "." in digits:
        whole, fraction = digits.split(".", 1)
        stripped = (whole + fraction).lstrip("0")
        return max(1, len(stripped))
    stripped = digits.lstrip("0").rstrip("0")
    return max(1, len(stripped))


def parse_number(text: str) -> Number | None:
    """The option as one number with an optional unit, or None when it says more than that."""
    return _number(text)


@lru_cache(maxsize=200_000)
def _number(text: str) -> Number | None:
    body = _APPROX.sub("", text.strip()).rstrip(". ")
    match = _NUMBER.search(body)
    if match is None or body[: match.start()].strip():
        return None
    unit = body[match.end() :]
    if any(ch.isdigit() for ch in unit) or (unit.strip() and not _UNIT_TEXT.match(unit.strip())):
        return None  # "35mm f1.8": more than one number
    if len(unit.split()) > 3:
        return None
    digits = match.group("num")
    value = float(digits.replace(",", ""))
    if match.group("den"):
        denominator = float(match.group("den"))
        if denominator == 0:
            return None
        value /= denominator
    if match.group("exp"):
        value *= 10.0 ** int(match.group("exp").replace("−", "-"))
    if match.group("sign") in ("-", "−", "–"):
        value = -value
    dimension: str | None = None
    factor = 1.0
    if unit.strip():
        found = quantities(f"1 {unit.strip()}")
        if (
            len(found) == 1
            and found[0].dimension is not None
            and not found[0].dimension.startswith("unknown")
        ):
            dimension, factor = found[0].dimension, found[0].base_value
        else:
            dimension = "text:" + option_key(unit)
    decimals = len(digits.split(".", 1)[1]) if "." in digits else 0
    if not math.isfinite(value * factor):
        return None
    return Number(
        value=value * factor,
        dimension=dimension,
        unit_written=unit,
        decimals=decimals,
        significant=significant_digits(digits) if not match.group("den") else len(digits.strip("0") or "0"),
        thousands_separator="," in digits,
    )


def same_value(a: Number, b: Number) -> bool:
    """Equal in value: the same dimension (or no unit on either side) and equal base values (up to a
    relative 1e-9: base values in SI units are tiny, "0.1001 nm" is 1.001e-10 m, so no absolute slack)."""
    if a.dimension != b.dimension and a.dimension is not None and b.dimension is not None:
        return False
    return math.isclose(a.value, b.value, rel_tol=1e-9, abs_tol=0.0)


def format_signature(text: str) -> dict[str, object]:
    """How the option is written, feature by feature (see the module docstring)."""
    stripped = text.strip()
    number = parse_number(stripped)
    final = _FINAL_PUNCTUATION.search(stripped)
    signature: dict[str, object] = {
        "final punctuation": final.group(0) if final else "",
        "brackets": any(c in stripped for c in "()[]"),
    }
    if number is not None:
        signature["decimals"] = number.decimals
        signature["unit"] = number.unit_written.strip()
        signature["space before unit"] = number.unit_written[:1].isspace() if number.unit_written else None
        signature["thousands separator"] = number.thousands_separator
    else:
        first = next((c for c in stripped if c.isalpha()), "")
        signature["initial capital"] = first.isupper()
    return signature
