"""The text-only shortcut solvers: each answers a multiple-choice item from its text alone.

Every solver scores the options of the items of one task (it picks the highest; a tie is a guess
among the tied; None: it does not apply to the item). Most look at one item at a time; two learn
from the task's other items (the letter prior, the learned baseline), always without the item they
answer. What each looks at, and why it is a known artefact of written options, is in docs/audit.md.

- position: the answer letter most often correct among the task's OTHER items (leave-one-out);
- length: the longest, the shortest option (characters);
- numbers (every option one number of one dimension): nearest the mean, nearest the median, the
  middle rank, the smallest, the largest, the roundest (fewest significant digits);
- format: the option written unlike all the others in some respect (decimals, unit, spacing,
  punctuation, case, brackets);
- words: most content words shared with the question, with the transcript (`Item.context`);
- ordering: the 37 option-comparing solvers of `expvid.ordering.solvers` on step-ordering items;
- learned: a cross-validated linear model over per-option features (`expvid.audit.learned`);
- a suite's own (`expvid.suites.shortcuts.ShortcutSolver`).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from expvid.audit.views import OptionView
from expvid.ordering.solvers import SOLVERS as ORDERING_SOLVERS
from expvid.ordering.solvers import Perm
from expvid.suites.shortcuts import ShortcutSolver

Scores = list[float] | None


@dataclass(frozen=True)
class Solver:
    """A solver as the audit runs it: the items of one task in, one score list (or None) per item out."""

    name: str
    family: str
    description: str
    solve: Callable[[Sequence[OptionView]], list[Scores]]
    #: Tasks it applies to (None: every multiple-choice task).
    tasks: tuple[str, ...] | None = None

    def applies_to(self, task: str) -> bool:
        return self.tasks is None or task in self.tasks


def per_item(name: str, family: str, description: str, score: Callable[[OptionView], Scores]) -> Solver:
    """A solver that looks at one item at a time."""
    return Solver(name, family, description, lambda views: [score(view) for view in views])


# --- position --------------------------------------------------------------------------------------


def _letter_prior(views: Sequence[OptionView]) -> list[Scores]:
    counts = Counter(view.letters[view.correct] for view in views)
    scores: list[Scores] = []
    for view in views:
        own = view.letters[view.correct]
        scores.append([float(counts[letter] - (letter == own)) for letter in view.letters])
    return scores


# --- length ----------------------------------------------------------------------------------------


def _longest(view: OptionView) -> Scores:
    return [float(n) for n in view.lengths]


def _shortest(view: OptionView) -> Scores:
    return [-float(n) for n in view.lengths]


# --- numbers ---------------------------------------------------------------------------------------


def _numeric(score: Callable[[list[float]], list[float]]) -> Callable[[OptionView], Scores]:
    def solver(view: OptionView) -> Scores:
        values = view.values
        return None if values is None else score(values)

    return solver


def _nearest(centre: Callable[[list[float]], float]) -> Callable[[list[float]], list[float]]:
    def score(values: list[float]) -> list[float]:
        middle = centre(values)
        return [-abs(v - middle) for v in values]

    return score


def _middle_rank(values: list[float]) -> list[float]:
    ranks = {v: r for r, v in enumerate(sorted(set(values)))}
    middle = (len(ranks) - 1) / 2
    return [-abs(ranks[v] - middle) for v in values]


def _roundest(view: OptionView) -> Scores:
    if view.values is None:
        return None
    return [-float(n.significant) for n in view.numbers if n is not None]


# --- format ----------------------------------------------------------------------------------------


def _odd_format(view: OptionView) -> Scores:
    """Per option, the format features in which it alone differs while all the others agree."""
    if view.k < 3:
        return None
    scores = [0.0] * view.k
    features = set().union(*(signature.keys() for signature in view.signatures))
    for feature in features:
        values = [signature.get(feature) for signature in view.signatures]
        counts = Counter(map(repr, values))
        if len(counts) != 2:
            continue
        (_, common), (odd_value, odd) = counts.most_common()
        if odd == 1 and common == view.k - 1:
            scores[[repr(v) for v in values].index(odd_value)] += 1.0
    return scores if any(scores) else None


# --- words -----------------------------------------------------------------------------------------


def _overlap(source: Callable[[OptionView], frozenset[str]]) -> Callable[[OptionView], Scores]:
    def solver(view: OptionView) -> Scores:
        words = source(view)
        if not words:
            return None
        return [len(option & words) / len(option) if option else 0.0 for option in view.option_words]

    return solver


# --- ordering --------------------------------------------------------------------------------------


def _ordering(score: Callable[[Sequence[Perm]], list[float]]) -> Callable[[OptionView], Scores]:
    def solver(view: OptionView) -> Scores:
        orders = view.orders
        return None if orders is None else score([orders[letter] for letter in view.letters])

    return solver


def suite_solver(shortcut: ShortcutSolver) -> Solver:
    """A suite's own solver (scores by letter) as the audit runs it."""

    def score(view: OptionView) -> Scores:
        found = shortcut.score(view.item)
        if found is None:
            return None
        return [float(found.get(letter, float("-inf"))) for letter in view.letters]

    return Solver(
        shortcut.name,
        "suite",
        shortcut.description or "the suite's own solver",
        lambda views: [score(view) for view in views],
        shortcut.tasks,
    )


def builtin_solvers() -> list[Solver]:
    """Every built-in solver but the learned baseline, in report order."""
    solvers = [
        Solver(
            "letter prior",
            "position",
            "the answer letter most often correct among the task's other items",
            _letter_prior,
        ),
        per_item("longest option", "length", "the option with the most characters", _longest),
        per_item("shortest option", "length", "the option with the fewest characters", _shortest),
        per_item(
            "nearest the mean",
            "numbers",
            "the value nearest the mean of the options' values",
            _numeric(_nearest(statistics.fmean)),
        ),
        per_item(
            "nearest the median",
            "numbers",
            "the value nearest the median of the options' values",
            _numeric(_nearest(statistics.median)),
        ),
        per_item("middle rank", "numbers", "the value ranked in the middle", _numeric(_middle_rank)),
        per_item("smallest value", "numbers", "the smallest value", _numeric(lambda vs: [-v for v in vs])),
        per_item("largest value", "numbers", "the largest value", _numeric(list)),
        per_item("roundest value", "numbers", "the value with the fewest significant digits", _roundest),
        per_item(
            "odd format",
            "format",
            "the option written unlike all others (decimals, unit, spacing, punctuation, case, brackets)",
            _odd_format,
        ),
        per_item(
            "question overlap",
            "words",
            "the option sharing most content words with the question",
            _overlap(lambda view: view.question_words),
        ),
        per_item(
            "transcript overlap",
            "transcript",
            "the option sharing most content words with the transcript the release carries",
            _overlap(lambda view: view.context_words),
        ),
    ]
    solvers += [
        per_item(
            f"ordering: {name}", "ordering", "step-ordering options compared as orders", _ordering(score)
        )
        for name, score in ORDERING_SOLVERS.items()
    ]
    return solvers
