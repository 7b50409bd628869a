"""The audit's findings from model runs: controls (`controls`) and item analysis (`item_analysis`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from expvid.audit.controls import item_controls, task_controls
from expvid.audit.item_analysis import analyse_items
from expvid.audit.result import AuditReport
from expvid.audit.runs import RunRecord, find_runs, read_run
from expvid.schema import DataError, Item

#: Share of a run's scored items that must be items of the audited release.
MIN_OVERLAP = 0.5


def load_runs(paths: Sequence[Path | RunRecord], progress: Any = None) -> list[RunRecord]:
    """Run records from paths (a run, or a folder of runs) or records already read."""
    records = [p for p in paths if isinstance(p, RunRecord)]
    folders = find_runs([Path(p) for p in paths if not isinstance(p, RunRecord)])
    bar = progress.phase("reading runs", len(folders)) if progress is not None else None
    for folder in folders:
        records.append(read_run(folder))
        if bar is not None:
            bar.advance()
    return records


def check_same_release(runs: Sequence[RunRecord], items: Sequence[Item], fingerprint: str | None) -> None:
    """Refuse runs made on another release (`DataError` naming the run)."""
    ids = {item.id for item in items}
    for run in runs:
        if fingerprint and run.annotations_fingerprint and run.annotations_fingerprint != fingerprint:
            raise DataError(
                f"--runs {run.path}: made on other annotation files (fingerprint "
                f"{run.annotations_fingerprint[:12]}, the release has {fingerprint[:12]})"
            )
        scored = list(run.outcomes)
        if scored and sum(i in ids for i in scored) < MIN_OVERLAP * len(scored):
            raise DataError(f"--runs {run.path}: most of its items are not items of this release")


def add_run_findings(
    report: AuditReport, items: Sequence[Item], runs: list[Any], progress: Any = None
) -> None:
    """Controls and item analysis from `runs` (paths or `RunRecord`s) into `report` (flags included)."""
    records = load_runs(runs, progress)
    check_same_release(records, items, report.fingerprint)
    results = {entry.id: entry for entry in report.items}
    report.controls = {
        "runs": [{"path": str(r.path), "model": r.base_model, "control": r.control} for r in records],
        "tasks": task_controls(items, records),
        "items": item_controls(items, records, results),
    }
    report.item_analysis = analyse_items(items, records, results)
