"""Nine numeric distractors that do not give a quantitative answer away.

SciVideoBench (section 2.2) makes them "by adding appropriate Gaussian noise to the correct answer".
Taken literally that centres the answer among its options (the option nearest the mean is right far
more often than one time in ten, the answer is never the smallest or the largest) and gives the
noisy values random trailing digits beside a round measured value (the roundest option is the
answer). So the noise keeps its scale and the draw is made exchangeable instead:

- the answer's rank among the ten sorted values is drawn uniformly (0 = smallest) from a generator
  seeded by the question; ten values are drawn independently from N(0, sigma^2) and shifted so that
  the one of that rank is the answer: the answer is then one draw among ten, like any distractor,
  and no statistic of the values (mean, median, range, gaps) singles it out;
- all ten are on the answer's grid: the answer's unit and decimals, and its roundness. Roundness is
  the coarsest step of the 1-5 ladder (..., 0.1, 0.5, 1, 5, 10, ...) the answer is a multiple of:
  37 is on the 1-step and not on the 5-step, so distractors are whole numbers not ending in 0 or 5;
  2.50 g leaves room for too few odd multiples of 0.5 g below it, so the grid falls back to the
  answer's power of ten (multiples of 0.10 g that are not whole grams). When the answer is round,
  so are its distractors;
- no two of the ten are within one display step of each other (2.50 g beside 2.51 g would be a
  second right answer to a reader), unless the question is about precision, where neighbouring
  readings are the point (then they differ by at least one step);
- positive when the answer is; sigma = noise x |answer|, at least three grid steps.

A positive answer so close to zero on its grid that nine smaller values do not fit (3 wells, 0.5 mL)
cannot have a uniform rank: `ComparableError` says so and the recipe drops the question (counted in
the report) rather than release a "pick the smallest" shortcut. An answer of 0 is rounder than any
other value and is refused the same way.

Values are handled as integers of display steps, so no float rounding ever changes a displayed digit.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

N_OPTIONS = 10
#: Independent draws tried per grid before the tight-room construction is used.
DRAWS = 400


class ComparableError(ValueError):
    """Nine distractors of the answer's precision and roundness cannot hide its rank."""


def display_units(value: float, decimals: int) -> int:
    """`value` as an integer number of display steps (10^-decimals); ValueError when the value has
    more decimals than that (showing it would change it: 2.5 with 0 decimals is not "2" nor "3")."""
    try:
        exact = Decimal(repr(float(value)))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{value!r} is not a finite number") from None
    if not exact.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    scaled = exact.scaleb(decimals)
    if scaled != scaled.to_integral_value():
        raise ValueError(
            f"the value {exact.normalize():f} has more decimals than 'decimals' ({decimals}) shows: "
            f"give the value as it is to be shown, or the decimals it needs"
        )
    return int(scaled)


def value_decimals(value: float, limit: int = 6) -> int:
    """Decimals needed to show `value` exactly (at most `limit`)."""
    exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
    return min(limit, max(0, -int(exponent))) if isinstance(exponent, int) else 0


def units_text(units: int, decimals: int, unit: str | None) -> str:
    text = f"{Decimal(units).scaleb(-decimals):.{decimals}f}"
    return f"{text} {unit}".strip() if unit else text


def number_text(value: float, decimals: int, unit: str | None) -> str:
    """`value` shown with `decimals` decimals and its unit (the value must fit: `display_units`)."""
    return units_text(display_units(value, decimals), decimals, unit)


@dataclass(frozen=True)
class Grid:
    """Integers (display steps) that are multiples of `step` and not of `coarser`: one roundness."""

    step: int
    coarser: int
    name: str

    def allows(self, units: int) -> bool:
        return units != 0 and units % self.step == 0 and units % self.coarser != 0

    @property
    def spacing(self) -> int:
        """Typical distance between neighbouring allowed values."""
        return self.step * (2 if self.coarser == 2 * self.step else 1)

    def at_most(self, bound: int) -> int:
        """The largest allowed value <= bound."""
        k = bound // self.step
        while not self.allows(k * self.step):
            k -= 1
        return k * self.step

    def at_least(self, bound: int) -> int:
        """The smallest allowed value >= bound."""
        k = -(-bound // self.step)
        while not self.allows(k * self.step):
            k += 1
        return k * self.step

    def nearest(self, target: float, *, below: int | None = None, above: int | None = None) -> int:
        """The allowed value nearest `target` within [above, below] (either bound optional)."""
        if below is not None and target >= below:
            return self.at_most(below)
        if above is not None and target <= above:
            return self.at_least(above)
        low, high = self.at_most(int(target // 1)), self.at_least(int(-(-target // 1)))
        if above is not None and low < above:
            return high
        if below is not None and high > below:
            return low
        return low if target - low <= high - target else high


def _ladder_step(units: int) -> int:
    """The coarsest step of the 1-5 ladder (1, 5, 10, 50, ... display steps) dividing `units`."""
    step = 1
    while True:
        coarser = _ladder_next(step)
        if units % coarser:
            return step
        step = coarser


def _ladder_next(step: int) -> int:
    return step * 5 if str(step).startswith("1") else step * 2


def grids(units: int) -> list[Grid]:
    """Grids of the answer's roundness, coarsest first. First its exact class on the 1-5 ladder (37:
    whole numbers not ending in 0 or 5; 12.5: halves not whole). An answer that does not end in 5
    may fall back to its power of ten (values ending in 5 join: rounder than the answer, never a
    hint to it); one that ends in 5 may not (among values ending in other digits it would be the
    roundest)."""
    magnitude = abs(units)
    ladder = _ladder_step(magnitude)
    found = [Grid(ladder, _ladder_next(ladder), "1-5 ladder")]
    if str(ladder).startswith("1"):
        found.append(Grid(ladder, ladder * 10, "power of ten"))
    return found


def room_below(units: int, grid: Grid, gap: int, wanted: int = N_OPTIONS - 1) -> int:
    """How many positive values fit below `units` on `grid`, `gap` apart from it and each other
    (counted up to `wanted`)."""
    count, ceiling = 0, units - gap
    while count < wanted and ceiling > 0:
        found = grid.at_most(ceiling)
        if found <= 0:
            break
        count += 1
        ceiling = found - gap
    return count


@dataclass
class NumericOptions:
    answer: str
    distractors: list[str]
    #: The answer's rank among the ten values sorted ascending (0: the smallest).
    rank: int
    grid: Grid
    sigma_units: float
    notes: list[str] = field(default_factory=list)

    def describe(self, decimals: int) -> dict[str, object]:
        step = Decimal(self.grid.step).scaleb(-decimals)
        return {
            "rank": self.rank,
            "grid": f"multiples of {step:f} ({self.grid.name})",
            "sigma": float(Decimal(round(self.sigma_units)).scaleb(-decimals)),
            **({"notes": self.notes} if self.notes else {}),
        }


def _rng(seed: str) -> random.Random:
    return random.Random(hashlib.sha256(seed.encode()).hexdigest())


def _valid(values: list[int], units: int, gap: int, grid: Grid) -> bool:
    ordered = sorted([*values, units])
    if any(b - a < gap for a, b in itertools.pairwise(ordered)):
        return False
    return all(grid.allows(v) for v in values) and (units < 0 or all(v > 0 for v in values))


def _draw(rng: random.Random, units: int, rank: int, sigma: float, gap: int, grid: Grid) -> list[int] | None:
    """Ten i.i.d. Gaussian draws, shifted so that the rank-th is the answer, snapped to the grid on
    their side of it; None when they collide or leave the positive range."""
    draws = sorted(rng.gauss(0.0, sigma) for _ in range(N_OPTIONS))
    pivot = draws[rank]
    values = []
    for index, draw in enumerate(draws):
        if index == rank:
            continue
        target = units + (draw - pivot)
        if index < rank:
            values.append(grid.nearest(target, below=units - gap))
        else:
            values.append(grid.nearest(target, above=units + gap))
    return values if _valid(values, units, gap, grid) else None


def _packed(rng: random.Random, units: int, rank: int, gap: int, grid: Grid) -> list[int]:
    """Little room below a positive answer: the values below are placed one by one from the top, each
    at random among the places that leave room for the rest; the values above at random steps."""
    values: list[int] = []
    ceiling = units - gap
    for left in range(rank - 1, -1, -1):
        places: list[int] = []
        place = grid.at_most(ceiling)
        while place > 0 and len(places) < 50 and room_below(place, grid, gap, left) >= left:
            places.append(place)
            place = grid.at_most(place - 1) if place - 1 > 0 else 0
        chosen = rng.choice(places)
        values.append(chosen)
        ceiling = chosen - gap
    floor = units + gap
    for _ in range(N_OPTIONS - 1 - rank):
        chosen = grid.at_least(floor + int(rng.expovariate(1.0) * 2 * max(grid.spacing, gap)))
        values.append(chosen)
        floor = chosen + gap
    return values


def numeric_options(
    value: float,
    decimals: int,
    unit: str | None,
    *,
    relative_sigma: float,
    seed: str,
    about_precision: bool = False,
) -> NumericOptions:
    """The answer's text and nine distractors' texts (see the module docstring); `ComparableError`
    when nine distractors cannot hide the answer's rank, ValueError when `value` does not fit
    `decimals`."""
    units = display_units(value, decimals)
    if units == 0:
        raise ComparableError("the answer is 0, rounder than any other value of its precision")
    gap = 1 if about_precision else 2
    rng = _rng(seed)
    rank = rng.randrange(N_OPTIONS)
    candidates = grids(units)
    if units > 0:
        usable = [g for g in candidates if room_below(units, g, max(gap, g.step)) >= N_OPTIONS - 1]
        if not usable:
            room = max(room_below(units, g, max(gap, g.step)) for g in candidates)
            grid = candidates[0]
            step = units_text(grid.step, decimals, unit)
            raise ComparableError(
                f"only {room} smaller positive value(s) of the answer's precision and roundness (multiples "
                f"of {step} that are not multiples of {units_text(grid.coarser, decimals, unit)}) fit below "
                f"{units_text(units, decimals, unit)}: nine distractors cannot hide its rank"
            )
        candidates = usable
    grid = candidates[0]
    sigma = max(relative_sigma * abs(units), 3.0 * max(grid.spacing, gap))
    notes: list[str] = []
    values = None
    for attempt in range(DRAWS):
        # collisions on a coarse grid: widen a little every 50 draws (at most 1.15^3)
        widened = sigma * 1.15 ** min(attempt // 50, 3)
        values = _draw(rng, units, rank, widened, gap, grid)
        if values is not None:
            sigma = widened
            break
    if values is None:
        values = _packed(rng, units, rank, gap, grid)
        notes.append("little room below the answer: distractors packed into it")
    assert _valid(values, units, gap, grid), (value, decimals, values)
    return NumericOptions(
        answer=units_text(units, decimals, unit),
        distractors=[units_text(v, decimals, unit) for v in values],
        rank=rank,
        grid=grid,
        sigma_units=sigma,
        notes=notes,
    )
