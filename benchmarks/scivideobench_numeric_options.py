"""How often blind numeric solvers find a quantitative answer: the paper's noise read literally vs expvid's draw.

SciVideoBench makes quantitative distractors "by adding appropriate Gaussian noise to the correct
answer". The literal reading (nine draws of answer + N(0, (0.2 |answer|)^2), rounded to the answer's
decimals, distinct, never the answer, positive when it is: what expvid did before) is compared with
`numeric_options` (uniform rank, the answer's grid, no neighbour within one display step) on the
same answers: the generated answers of the test (`test_svb_numeric_options._answers`), the solvers
of the validity audit's registry that the test runs (with the test's extra "least round" solver),
each solver's accuracy and whether the audit flags it, and, for the literal reading, how often a
distractor sits one display step from the answer. Answers `numeric_options` refuses (too little
room below them) are left out of both.

    .venv/bin/python benchmarks/scivideobench_numeric_options.py --items 600
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "construction_scivideobench"))


def literal_distractors(value: float, decimals: int, *, relative_sigma: float, seed: str) -> list[float]:
    """The paper read literally (expvid's generator before issue 27)."""
    rng = random.Random(hashlib.sha256(seed.encode()).hexdigest())
    step = 10.0 ** (-decimals)
    sigma = max(abs(value) * relative_sigma, 3 * step)
    answer = round(value, decimals)
    chosen: list[float] = []
    tries = 0
    while len(chosen) < 9:
        tries += 1
        if tries % 200 == 0:
            sigma *= 1.5
        candidate = round(value + rng.gauss(0.0, sigma), decimals)
        if abs(candidate - answer) < step / 2 or any(abs(candidate - c) < step / 2 for c in chosen):
            continue
        if value > 0 and candidate <= 0:
            continue
        chosen.append(candidate)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=600)
    args = parser.parse_args()

    from test_svb_numeric_options import LEAST_ROUND, _answers

    from expvid.audit import AuditOptions, audit_items
    from expvid.construction.recipes.scivideobench.numeric_options import (
        ComparableError,
        number_text,
        numeric_options,
    )
    from expvid.construction.recipes.scivideobench.options import place_options
    from expvid.schema import AnswerType, Item

    sets: dict[str, list[tuple[dict[str, str], str]]] = {"literal noise": [], "expvid": []}
    ranks: dict[str, list[int]] = {"literal noise": [], "expvid": []}
    neighbours = 0
    refused = 0
    for index, (value, decimals, unit) in enumerate(_answers(3 * args.items)):
        seed = f"experiment-{index % 37}:question {index}"
        uid = f"v{index}/q{index}/quantitative"
        try:
            made = numeric_options(value, decimals, unit, relative_sigma=0.2, seed=seed)
        except ComparableError:
            refused += 1
            continue
        literal = literal_distractors(value, decimals, relative_sigma=0.2, seed=seed)
        answer = number_text(value, decimals, unit)
        step = Decimal(1).scaleb(-decimals)
        texts = [f"{Decimal(repr(v)).quantize(step):f} {unit}" for v in literal]
        neighbours += any(abs(Decimal(t.split()[0]) - Decimal(answer.split()[0])) <= step for t in texts)
        for name, distractors in (("literal noise", texts), ("expvid", made.distractors)):
            options, letter = place_options(uid, answer, distractors)
            sets[name].append((options, letter))
            ordered = sorted(options.values(), key=lambda t: Decimal(t.split()[0]))
            ranks[name].append(ordered.index(answer))
        if len(sets["expvid"]) == args.items:
            break
    count = len(sets["expvid"])
    print(f"{count} answers (and {refused} refused by expvid for lack of room below them); chance 10.0%")
    results = {}
    for kind, items in sets.items():
        release = [
            Item(id=f"quantitative/{i}", suite="scivideobench", task="quantitative", question="What total mass?",
                 options=options, answer=letter, answer_type=AnswerType.CHOICE)
            for i, (options, letter) in enumerate(items)
        ]  # fmt: skip
        report = audit_items(release, options=AuditOptions(embeddings=False, extra_solvers=[LEAST_ROUND]))
        results[kind] = {solver.name: solver for solver in report.solvers}
    print(f"{'solver (expvid audit)':26} {'literal noise':>20} {'expvid':>20}")
    for name in results["expvid"]:
        cells = []
        for kind in sets:
            solver = results[kind].get(name)
            cells.append(
                "-"
                if solver is None
                else f"{solver.accuracy:.1%}{' FLAGGED' if solver.flagged else ''} n={solver.n}"
            )
        print(f"{name:26} {cells[0]:>20} {cells[1]:>20}")
    for kind in sets:
        extremes = sum(r in (0, 9) for r in ranks[kind])
        expected = count / 10
        chi2 = sum((ranks[kind].count(r) - expected) ** 2 / expected for r in range(10))
        print(
            f"{kind}: answer smallest or largest in {extremes} of {count}; rank chi-square {chi2:.1f} (9 df)"
        )
    print(
        f"literal noise: a distractor within one display step of the answer in {neighbours / count:.1%} of items"
    )


if __name__ == "__main__":
    main()
