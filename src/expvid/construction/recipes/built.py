"""What a recipe's build command hands back to `expvid build`, with the one notice every recipe prints
when units failed (the next run of the same command asks exactly those again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from expvid.recipes.api import BuiltRelease

FAILED_NOTICE = (
    "{n} unit(s) failed; everything else is written. Run the same command again to retry exactly those."
)


def built_release(console: Console, out: Path, suite: str, report: dict[str, Any]) -> BuiltRelease:
    """The `BuiltRelease` of a finished build report, after saying how many units failed (if any)."""
    failed = report["failed_units"]
    if failed:
        console.print(FAILED_NOTICE.format(n=len(failed)), markup=False, highlight=False)
    return BuiltRelease(
        out=out.expanduser(), suite=suite, failed_units=len(failed), released=int(report["total_items"])
    )
