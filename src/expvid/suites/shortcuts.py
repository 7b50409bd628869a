"""Text-only shortcut solvers a suite adds to `expvid audit`, through its public API.

`expvid audit` runs a registry of solvers that see only an item's text (longest option, nearest the
mean, roundest number, ...; docs/audit.md) on every multiple-choice task of a release. A suite
that knows a shortcut of its own format adds it by returning `ShortcutSolver`s from its
`shortcut_solvers()` method (`expvid.suites.suite.Suite` returns none): the audit tests it against
chance exactly like the built-in ones, with the same correction for the number of solvers.

A solver scores each option of one item from the item alone (never the answer: the audit hides
nothing from it, so a solver that reads `item.answer` measures nothing); the audit picks the
highest score and counts a tie as a guess among the tied. Returning None says the solver does not
apply to the item (it is then not counted for that solver).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from expvid.schema import Item


@dataclass(frozen=True)
class ShortcutSolver:
    """A text-only solver: `score(item)` -> option letter -> score (highest picked), or None."""

    name: str
    score: Callable[[Item], Mapping[str, float] | None]
    #: Tasks it applies to (None: every multiple-choice task of the suite).
    tasks: tuple[str, ...] | None = None
    #: One line for the audit report: what the solver looks at.
    description: str = ""
