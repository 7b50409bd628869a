"""ProMQA's analyses across runs (section 5): the self-preference checks of Table 12.

The tables are computed by this package's `self_preference` module, which reads the
generator of each question from the release the recipe wrote; it is imported only when asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from expvid.suites.analyses import RunAnalysis


def self_preference_tables(runs: Sequence[Path]) -> str:
    """Generator-predictor and predictor-evaluator tables (Table 12) with bias checks, as Markdown."""
    from expvid.suites.promqa.self_preference import self_preference, self_preference_markdown

    return self_preference_markdown(self_preference(list(runs)))


ANALYSES: dict[str, RunAnalysis] = {
    "self-preference": RunAnalysis(
        help="generator-predictor and predictor-evaluator tables (section 5, Table 12) with bias checks",
        run=self_preference_tables,
    ),
}
