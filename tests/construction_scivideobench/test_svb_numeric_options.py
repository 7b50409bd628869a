"""Quantitative options that do not give the answer away, tested on 600 generated items.

The answers are drawn the way quantitative answers come: computed values of 2-4 significant figures
over eight orders of magnitude, round measured-looking values (37 degC, 12.5 %, 375 mL; those too
small on their own grid to hide their rank, like 2.50 g or 25 degC, are refused and left out),
negative ones. Every item goes through the recipe's own generator and option placement. The blind
solvers are the validity audit's registry (`expvid.audit.engine.solver_registry`: nearest the mean
and the median, middle rank, smallest, largest, roundest, odd format, option length, letter prior, the
learned text-only model), with one more added through the registry's hook for a suite's own
solvers (`ShortcutSolver`): the least round option, the reverse of a roundness artefact. Each must
score within chance (10% +- 3 standard errors) and none may be flagged by the audit itself.
"""

from __future__ import annotations

import itertools
import random
from decimal import Decimal

import pytest

from expvid.audit import AuditOptions, AuditReport, audit_items
from expvid.construction.recipes.scivideobench.numeric_options import (
    N_OPTIONS,
    ComparableError,
    display_units,
    number_text,
    numeric_options,
)
from expvid.construction.recipes.scivideobench.options import place_options
from expvid.schema import AnswerType, Item
from expvid.suites.api import ShortcutSolver

ITEMS = 600
#: chi-square with 9 degrees of freedom: P(X > 21.67) = 0.01
CHI2_9_AT_1_PERCENT = 21.67


def _answers(count: int) -> list[tuple[float, int, str]]:
    """(value, decimals, unit) as a generator model writes them."""
    rng = random.Random(27)
    units = ["g", "mL", "mg/mL", "°C", "s", "%", "mM", "nm", "rpm", "kPa"]
    found = []
    while len(found) < count:
        kind = rng.random()
        exponent = rng.randint(-3, 4)
        if kind < 0.6:  # computed: 2-4 significant figures
            figures = rng.randint(2, 4)
            mantissa = rng.randint(10 ** (figures - 1), 10**figures - 1)
            decimals = max(0, figures - 1 - exponent)
            value = float(Decimal(mantissa).scaleb(exponent - figures + 1))
        elif kind < 0.9:  # round, measured-looking: 2.50, 37, 250, 12.5, 1.5
            mantissa = rng.choice([12, 15, 25, 37, 45, 75, 120, 125, 250, 375])
            shift = rng.randint(-2, 2)
            value = float(Decimal(mantissa).scaleb(shift))
            decimals = max(0, -shift) + rng.choice([0, 0, 1])  # sometimes shown with a trailing zero
        else:  # below zero: temperatures, potentials
            value = -float(rng.choice([80, 20, 196, 4.5, 12.4, 0.35, 1.27]))
            decimals = max(0, -Decimal(repr(value)).normalize().as_tuple().exponent)  # type: ignore[operator]
        found.append((value, decimals, rng.choice(units)))
    return found


def _significant(units: int) -> int:
    """`units` without its trailing zeros (30 -> 3, 250 -> 25)."""
    while units and units % 10 == 0:
        units //= 10
    return units


def _number(text: str) -> Decimal:
    return Decimal(text.split()[0])


def _least_round(item: Item) -> dict[str, float]:
    """Per option, its significant digits: the least round option scores highest."""
    return {
        letter: float(len(_number(text).normalize().as_tuple().digits))
        for letter, text in (item.options or {}).items()
    }


#: A solver outside the registry, added the way a suite adds its own (`AuditOptions.extra_solvers`).
LEAST_ROUND = ShortcutSolver(
    "least round", _least_round, description="the value with the most significant digits"
)


@pytest.fixture(scope="module")
def generated() -> list[tuple[dict[str, str], str, int, tuple[float, int, str]]]:
    """(options A-J, answer letter, answer rank, the answer as asked) for ITEMS items."""
    items, refused = [], 0
    for index, (value, decimals, unit) in enumerate(_answers(3 * ITEMS)):
        seed = f"experiment-{index % 37}:question {index}"
        try:
            made = numeric_options(value, decimals, unit, relative_sigma=0.2, seed=seed)
        except ComparableError:
            # only a positive answer with little room below it on its own roundness (3, 30, 0.50, 1.8, 25,
            # 2.50): nine values of that roundness, 2 display steps apart, cannot fit below it
            significant = _significant(display_units(value, decimals))
            assert 0 < significant < 20 or (significant % 10 == 5 and significant < 100), (value, decimals)
            refused += 1
            continue
        options, letter = place_options(f"v{index}/q{index}/quantitative", made.answer, made.distractors)
        items.append((options, letter, made.rank, (value, decimals, unit)))
        if len(items) == ITEMS:
            break
    assert len(items) == ITEMS and refused < ITEMS // 2  # the round-looking third of the answers
    return items


def test_the_answers_rank_is_uniform(generated) -> None:  # type: ignore[no-untyped-def]
    counts = [0] * N_OPTIONS
    for options, letter, rank, _ in generated:
        ordered = sorted(options.values(), key=_number)
        assert ordered.index(options[letter]) == rank
        counts[rank] += 1
    expected = len(generated) / N_OPTIONS
    chi2 = sum((c - expected) ** 2 / expected for c in counts)
    assert chi2 < CHI2_9_AT_1_PERCENT, counts
    assert counts[0] > 0 and counts[-1] > 0  # the answer is sometimes the smallest and the largest


@pytest.fixture(scope="module")
def audited(generated) -> AuditReport:  # type: ignore[no-untyped-def]
    """The validity audit of the generated items (text-only solvers; no embeddings: numbers only)."""
    items = [
        Item(
            id=f"quantitative/{index}",
            suite="scivideobench",
            task="quantitative",
            question="What total mass is used?",
            options=options,
            answer=letter,
            answer_type=AnswerType.CHOICE,
        )
        for index, (options, letter, _, _) in enumerate(generated)
    ]
    return audit_items(items, options=AuditOptions(embeddings=False, extra_solvers=[LEAST_ROUND]))


#: Solvers that must answer every generated item (numbers of one unit), and so be tested on all.
ALWAYS_APPLY = (
    "nearest the mean", "nearest the median", "middle rank", "smallest value", "largest value", "letter prior",
    "learned text-only model",
)  # fmt: skip


def test_blind_solvers_of_the_audit_score_at_chance(audited: AuditReport) -> None:
    tested = {solver.name: solver for solver in audited.solvers}
    assert set(ALWAYS_APPLY) <= set(tested), sorted(tested)
    for name in ALWAYS_APPLY:
        assert tested[name].n == ITEMS, (name, tested[name].n)
    for name in ("roundest value", "least round"):  # an item whose ten values are equally round: no pick
        assert name in tested and tested[name].n >= ITEMS // 3, (name, tested[name].n)
    for solver in audited.solvers:
        margin = 3 * (solver.chance * (1 - solver.chance) / solver.n) ** 0.5
        assert abs(solver.accuracy - solver.chance) <= margin, (
            f"{solver.name}: {solver.accuracy:.3f} right over {solver.n} (chance {solver.chance:.3f} +- {margin:.3f})"
        )
        assert not solver.flagged, solver.name
    assert not audited.flagged_items


def test_ten_values_share_unit_precision_and_grid_and_keep_apart(generated) -> None:  # type: ignore[no-untyped-def]
    for options, letter, _, (value, decimals, unit) in generated:
        answer = options[letter]
        assert answer == number_text(value, decimals, unit)
        step = Decimal(1).scaleb(-decimals)
        answer_units = display_units(value, decimals)
        texts = list(options.values())
        assert len(set(texts)) == N_OPTIONS
        for text in texts:
            number, shown_unit = text.split(" ", 1)
            assert shown_unit == unit
            assert len(number.partition(".")[2]) == decimals  # same precision as the answer
            if value > 0:
                assert _number(text) > 0
        for text in texts:
            if text == answer:
                continue
            # more than one display step from the answer and from each other
            assert abs(_number(text) - _number(answer)) > step, (answer, text)
        ordered = sorted(_number(t) for t in texts)
        assert all(b - a > step for a, b in itertools.pairwise(ordered)), texts
        # the answer's roundness: every value a multiple of the answer's own power of ten
        power = 1
        while answer_units % (power * 10) == 0:
            power *= 10
        for text in texts:
            units = int(_number(text).scaleb(decimals))
            assert units % power == 0 and units % (power * 10) != 0, (answer, text)


def test_round_answers_get_round_distractors() -> None:
    made = numeric_options(37, 0, "°C", relative_sigma=0.2, seed="incubation")
    assert all(int(t.split()[0]) % 5 for t in made.distractors)  # like 37: not ending in 0 or 5
    made = numeric_options(2.4, 2, "g", relative_sigma=0.2, seed="balance")
    assert made.answer == "2.40 g"  # tenths of a gram, not halves nor whole grams
    assert all(t[-3] != "5" and t.endswith("0 g") and not t.endswith(".00 g") for t in made.distractors)
    made = numeric_options(12.5, 1, "%", relative_sigma=0.2, seed="yield")
    assert all(t.split()[0].endswith(".5") for t in made.distractors)


def test_a_precision_question_may_have_neighbouring_readings() -> None:
    made = numeric_options(4.46, 2, "mL", relative_sigma=0.002, seed="pipette", about_precision=True)
    values = sorted([*map(_number, made.distractors), _number(made.answer)])
    assert min(b - a for a, b in itertools.pairwise(values)) == Decimal("0.01")


@pytest.mark.parametrize(
    ("value", "decimals", "why"),
    [
        (3, 0, "only 1 smaller positive value"),
        (0.5, 1, "only 0 smaller positive value"),
        (
            2.5,
            2,
            r"only 2 smaller positive value\(s\) of the answer's precision and roundness \(multiples of 0.50 wells",
        ),
        (75, 0, "only 7 smaller"),
        (0, 2, "the answer is 0"),
    ],
)
def test_an_answer_without_room_for_a_hidden_rank_is_refused(value: float, decimals: int, why: str) -> None:
    with pytest.raises(ComparableError, match=why):
        numeric_options(value, decimals, "wells", relative_sigma=0.2, seed="count")


@pytest.mark.parametrize(("value", "decimals"), [(2.5, 0), (0.125, 2), (1e-7, 6)])
def test_decimals_never_round_the_answer_into_another_number(value: float, decimals: int) -> None:
    with pytest.raises(ValueError, match="has more decimals than 'decimals'"):
        number_text(value, decimals, "g")


def test_displayed_digits_are_exact() -> None:
    assert number_text(2.675, 3, "g") == "2.675 g"  # a float just below 2.675: no binary rounding
    assert number_text(0.1, 1, None) == "0.1"
    assert number_text(1200000.0, 0, "cells") == "1200000 cells"
    assert number_text(2.5, 2, "g") == "2.50 g"
