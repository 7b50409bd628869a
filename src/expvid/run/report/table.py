"""The paper's results table as data: column groups, rows for runs and for published references.

For ExpVid this is Table 2: Tool, Mat., Quan., Oper., Avg | Ord., Gen., Veri., Pred., Avg |
Anal., Disc., Avg. A suite may describe its own layout (`table_layout()`); otherwise the layout is
derived from its tasks (column labels) and its levels (one group per level, ending in "Avg").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from expvid.run.rundir import RunDir
from expvid.run.scoring_phase import RunScores, read_scores
from expvid.schema import DataError
from expvid.suites.protocol import EvalSuite


@dataclass(frozen=True)
class Column:
    key: str  # task name, or level name for an average column
    label: str
    kind: str  # "task" | "level"


@dataclass(frozen=True)
class ColumnGroup:
    name: str  # "Level-1"
    columns: tuple[Column, ...]


@dataclass
class Row:
    label: str
    values: dict[str, float | None]
    ci: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    reference: bool = False
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    unparseable: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)


@dataclass
class Table:
    groups: tuple[ColumnGroup, ...]
    rows: list[Row]

    @property
    def columns(self) -> list[Column]:
        return [column for group in self.groups for column in group.columns]


def default_layout(suite: EvalSuite) -> tuple[ColumnGroup, ...]:
    custom = getattr(suite, "table_layout", None)
    if callable(custom):
        layout: tuple[ColumnGroup, ...] = custom()
        return layout
    labels = {spec.name: spec.column for spec in suite.tasks}
    groups = []
    for level in suite.levels:
        number = level.name.removeprefix("L")
        columns = tuple(Column(task, labels.get(task, task), "task") for task in level.tasks)
        groups.append(ColumnGroup(f"Level-{number}", (*columns, Column(level.name, "Avg.", "level"))))
    return tuple(groups)


@dataclass
class LoadedRun:
    rundir: RunDir
    scores: RunScores
    label: str


def load_runs(paths: Sequence[Path]) -> list[LoadedRun]:
    runs = []
    labels: dict[str, int] = {}
    for path in paths:
        rundir = RunDir(path)
        if not rundir.scores_path.is_file():
            raise DataError(f"{path}: no scores.json (run `expvid eval` or `expvid score {path}` first)")
        scores = read_scores(rundir)
        label = scores.run.model
        labels[label] = labels.get(label, 0) + 1
        runs.append(LoadedRun(rundir, scores, label))
    for run in runs:  # the same model twice: tell the rows apart by directory name
        if labels[run.label] > 1:
            run.label = f"{run.label} ({run.rundir.root.name})"
    return runs


def run_row(run: LoadedRun, groups: Sequence[ColumnGroup]) -> Row:
    scores = run.scores
    row = Row(label=run.label, values={})
    for column in (c for g in groups for c in g.columns):
        entry = scores.tasks.get(column.key) if column.kind == "task" else scores.levels.get(column.key)
        row.values[column.key] = None if entry is None else entry.score
        row.ci[column.key] = None if entry is None else entry.ci95
        if entry is not None:
            row.counts[column.key] = entry.n
            row.unparseable[column.key] = entry.n_unparseable
            row.failed[column.key] = entry.n_failed
    row.notes = list(scores.run.notes)
    return row


def reference_rows(suite: EvalSuite, which: Sequence[str] | None) -> list[Row]:
    """Published rows of the suite's paper table (all when `which` is None; none when empty)."""
    if which is not None and not which:
        return []
    provider = getattr(suite, "reference_rows", None)
    if not callable(provider):
        return []
    rows = [
        Row(label=str(entry["label"]), values=dict(entry["values"]), reference=True) for entry in provider()
    ]
    if which is None:
        return rows
    wanted = [w.lower() for w in which]
    return [row for row in rows if any(w in row.label.lower() for w in wanted)]


def build_table(suite: EvalSuite, runs: Sequence[LoadedRun], references: Sequence[str] | None) -> Table:
    groups = default_layout(suite)
    rows = [run_row(run, groups) for run in runs]
    rows.extend(reference_rows(suite, references))
    return Table(groups=groups, rows=rows)
