"""Analyses a suite's paper computes across several runs of the suite, beside its score table.

Some papers report more than one table row per run: a table built from several runs together (a
model's score on questions it generated itself, a judge's score of its own predictions). A suite
offers each as a `RunAnalysis` from its `run_analyses()` hook; `expvid report RUNS --analysis NAME`
runs it on the run directories and prints its Markdown. Nothing outside the suite names one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunAnalysis:
    """One analysis over run directories of a suite: what it shows, and the function that makes it.

    `run` takes the run directories (as given on the command line) and returns Markdown; bad input
    raises `expvid.schema.DataError` naming the run and what is missing.
    """

    help: str
    run: Callable[[Sequence[Path]], str]
