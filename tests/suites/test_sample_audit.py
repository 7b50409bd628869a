"""The bundled ExpVid sample gives no blind solver a shortcut (the validity audit's findings, fixed at
the generator): step-ordering options are the symmetric sets the recipe builds, and quantity
distractors hide the true value's rank."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from expvid.audit import AuditOptions, audit_items
from expvid.ordering.solvers import option_orders, shortcuts
from expvid.schema import AnswerType, Item
from expvid.suites.expvid_suite import load_expvid
from expvid.suites.sample.quantities import parse_quantity
from expvid.suites.sample.quantity_distractors import quantity_distractors
from expvid.suites.sample.scripts import load_scripts


def test_no_ordering_solver_reads_the_samples_step_orders(sample_dir: Path) -> None:
    """Before: two adjacent swaps and a reshuffle, whose medoid is the correct order (the audit's
    hamming medoid and position plurality answered 14 of 18)."""
    items = [i for i in load_expvid(sample_dir, tasks=["sequence_ordering"], check_media=False).items]
    assert len(items) == 18
    for item in items:
        orders = option_orders(item)
        assert orders is not None, item.id
        correct, distractors = orders
        assert len(set(distractors)) == 3 and correct not in distractors
        assert shortcuts(correct, distractors) == [], item.id


def quantity_items(per_quantity: int, seed: int = 0) -> list[Item]:
    """Every quantity of the sample's protocols, drafted `per_quantity` times (other draws), the
    answer letter uniform: the four-option items a blind solver would face (also used by
    benchmarks/sample_quantity_audit.py)."""
    rng = random.Random(seed)
    quantities = [step.quantity for script in load_scripts() for step in script.steps]
    items = []
    for index, quantity in enumerate(q for q in quantities for _ in range(per_quantity)):
        options = [quantity, *quantity_distractors(quantity, random.Random(f"{seed}:{quantity}:{index}"))]
        order = rng.sample(range(4), 4)
        items.append(
            Item(
                id=f"quantity/{index}", suite="expvid", task="quantity", question="How much is used?",
                options={"ABCD"[k]: options[i] for k, i in enumerate(order)}, answer="ABCD"[order.index(0)],
                answer_type=AnswerType.CHOICE,
            )
        )  # fmt: skip
    return items


def test_quantity_distractors_leave_every_blind_solver_at_chance() -> None:
    """Before: the true value sat in the middle of nearby multiples (never the largest: 1 of 82 in
    the built sample), and a learned text-only model read 54% of the built sample's quantity items.
    Here every quantity of the protocols twice: 198 items, more than twice a build's 82."""
    items = quantity_items(per_quantity=2)
    report = audit_items(items, options=AuditOptions(embeddings=False))
    tested = {solver.name: solver for solver in report.solvers}
    for name in (
        "nearest the mean",
        "middle rank",
        "smallest value",
        "largest value",
        "learned text-only model",
    ):
        solver = tested[name]
        margin = 3 * (0.25 * 0.75 / solver.n) ** 0.5
        assert solver.n > 0.9 * len(items) and abs(solver.accuracy - 0.25) <= margin, (name, solver.accuracy)
    assert not report.flagged_solvers, [(s.name, s.accuracy) for s in report.flagged_solvers]
    assert not report.flagged_items


def test_the_true_values_place_is_equally_likely_over_the_samples_quantities() -> None:
    """Some quantities allow only some places ("1 drop" is the smallest of its whole-number
    neighbours); the others are weighted to make up for them."""
    ranks: Counter[int] = Counter()
    quantities = [step.quantity for script in load_scripts() for step in script.steps]
    for seed in range(8):
        for text in quantities:
            shown = [text, *quantity_distractors(text, random.Random(f"{seed}:{text}"))]
            values = sorted(parse_quantity(t).value for t in shown)
            ranks[values.index(parse_quantity(text).value)] += 1
    expected = sum(ranks.values()) / 4
    chi2 = sum((ranks[r] - expected) ** 2 / expected for r in range(4))
    assert chi2 < 11.34, ranks  # chi-square, 3 degrees of freedom, p = 0.01
    free = Counter(
        sorted(
            parse_quantity(t).value for t in ["539 mg", *quantity_distractors("539 mg", random.Random(s))]
        ).index(539.0)
        for s in range(200)
    )
    assert set(free) == {0, 1, 2, 3}, free
    # as round as the true value: "30 min" gets one significant digit, "539 mg" three, "1.5 mL" two
    for text, digits in (("30 min", 1), ("539 mg", 3), ("1.5 mL", 2), ("500 µL", 1)):
        for seed in range(20):
            for distractor in quantity_distractors(text, random.Random(seed)):
                number = distractor.split()[0]
                shown = number.replace(".", "").lstrip("0")
                assert len(shown if "." in number else shown.rstrip("0")) == digits, (text, distractor)
    # nothing below one drop: it can only be the smallest, and its distractors are whole drops
    assert quantity_distractors("1 drop", random.Random(0)) and all(
        parse_quantity(d).value > 1 and parse_quantity(d).value.is_integer()
        for d in quantity_distractors("1 drop", random.Random(0))
    )
