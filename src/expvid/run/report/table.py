"""The paper's results table as data: column groups, rows for runs and for published references.

For ExpVid this is Table 2: Tool, Mat., Quan., Oper., Avg | Ord., Gen., Veri., Pred., Avg |
Anal., Disc., Avg. A suite may describe its own layout (`table_layout()`), as ColumnGroups or as
plain dicts `{"name", "columns": [{"key", "label", "kind", "path"?, "fmt"?}]}` (so suites need not
import the runner); otherwise the layout is derived from its tasks (column labels) and its levels
(one group per level, ending in "Avg"). Column kinds: "task" (scores.tasks), "level"
(scores.levels) and "cell" (any entry of scores.json with a `score`, found by `path`: a breakdown
group's level, a discipline's level, a metric).

A run scored with other extraction modes (a suite's `extraction_modes`, e.g. an official reader) gets one more row
per mode, labelled "[mode extraction]", right under its own row.

A run that leaves records out (`--limit`, `--tasks`) or has items without a prediction is labelled
in its row's own label ("model (partial)", "(incomplete)"), so no rendering can show it beside a
paper's rows without the label; its caveat lines (`caveats.py`) say why and what scored 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.run.report.caveats import dataset_notes, partial_label, partial_reason, run_caveats
from expvid.run.report.departures import departure_notes
from expvid.run.report.display_names import display_names
from expvid.run.report.settings_note import run_settings_note
from expvid.run.rundir import RunDir
from expvid.run.scoring_phase import RunScores, read_scores
from expvid.schema import DataError
from expvid.suites.protocol import EvalSuite


@dataclass(frozen=True)
class Column:
    key: str  # task name, level name, or a suite's cell key (unique within the table)
    label: str
    kind: str  # "task" | "level" | "cell"
    path: tuple[str, ...] = ()  # for "cell": keys into scores.json leading to an entry with "score"
    fmt: str = ".1f"

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Column:
        return cls(
            key=str(spec["key"]),
            label=str(spec.get("label", spec["key"])),
            kind=str(spec.get("kind", "task")),
            path=tuple(str(part) for part in spec.get("path", ())),
            fmt=str(spec.get("fmt", ".1f")),
        )


@dataclass(frozen=True)
class ColumnGroup:
    name: str  # "Level-1"
    columns: tuple[Column, ...]


@dataclass
class Row:
    #: What the row is called: a run's display name (+ its partial marker), a published row's model.
    label: str
    values: dict[str, float | None]
    ci: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    reference: bool = False
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    unparseable: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    #: Run-wide counts over every task of scores.json (whatever columns the layout shows):
    #: {"unparseable": n, "failed": n}; None for published rows.
    totals: dict[str, int] | None = None
    #: Frames and resolution the model was shown (from the manifest); None for published rows.
    settings: str | None = None
    #: Why the run is partial (--limit, --tasks; stopped at its budget, batches pending), or None.
    partial: str | None = None
    #: One line per kind of problem behind the row's numbers (see `caveats.run_caveats`).
    caveats: list[str] = field(default_factory=list)
    #: The run's dataset fingerprint (annotations and media), None for published rows.
    dataset: str | None = None
    #: USD the run directory spent (None: unknown or not recorded) and its one-line summary.
    cost_usd: float | None = None
    cost: str | None = None
    #: The model spec the run was given (server URL included); None for published rows. HTML shows
    #: it as the label's tooltip, CSV in a column (Markdown: `Table.models`).
    spec: str | None = None


@dataclass
class Table:
    groups: tuple[ColumnGroup, ...]
    rows: list[Row]
    #: Notes about the rows together (runs made on different media), shown under the table.
    notes: list[str] = field(default_factory=list)
    #: Run label -> the model spec it stands for, where the two differ (a footnote in Markdown).
    models: dict[str, str] = field(default_factory=dict)

    @property
    def columns(self) -> list[Column]:
        return [column for group in self.groups for column in group.columns]


def _group(spec: ColumnGroup | dict[str, Any]) -> ColumnGroup:
    if isinstance(spec, ColumnGroup):
        return spec
    return ColumnGroup(str(spec["name"]), tuple(Column.from_spec(column) for column in spec["columns"]))


def default_layout(suite: EvalSuite) -> tuple[ColumnGroup, ...]:
    custom = getattr(suite, "table_layout", None)
    if callable(custom):
        return tuple(_group(spec) for spec in custom())
    labels = {spec.name: spec.column for spec in suite.tasks}
    groups = []
    for level in suite.levels:
        number = level.name.removeprefix("L")
        name = f"Level-{number}" if number.isdigit() else level.name  # "L1" -> "Level-1"; "Overall" as is
        columns = tuple(Column(task, labels.get(task, task), "task") for task in level.tasks)
        groups.append(ColumnGroup(name, (*columns, Column(level.name, "Avg.", "level"))))
    return tuple(groups)


@dataclass
class LoadedRun:
    rundir: RunDir
    scores: RunScores
    label: str


def load_runs(paths: Sequence[Path]) -> list[LoadedRun]:
    """The runs, labelled with their model's display name (`display_names`: the model's name, told
    apart by server or directory where two runs would share it); the spec stays in each row."""
    loaded = []
    for path in paths:
        rundir = RunDir(path)
        if not rundir.scores_path.is_file():
            raise DataError(f"{path}: no scores.json (run `expvid eval` or `expvid score {path}` first)")
        loaded.append((rundir, read_scores(rundir)))
    labels = display_names([s.run.model for _, s in loaded], [d.root.name for d, _ in loaded])
    return [LoadedRun(rundir, scores, label) for (rundir, scores), label in zip(loaded, labels, strict=True)]


def lookup(data: dict[str, Any], column: Column) -> dict[str, Any] | None:
    """The scores.json entry a column shows (a dict with "score", "n", ...), or None."""
    path = (
        column.path if column.kind == "cell" else ("tasks" if column.kind == "task" else "levels", column.key)
    )
    node: Any = data
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) and "score" in node else None


def _row(label: str, data: dict[str, Any], groups: Sequence[ColumnGroup]) -> Row:
    tasks = data.get("tasks", {}).values()
    totals = {
        "unparseable": sum(int(t.get("n_unparseable", 0)) for t in tasks),
        "failed": sum(int(t.get("n_failed", 0)) for t in tasks),
    }
    row = Row(label=label, values={}, totals=totals)
    for column in (c for g in groups for c in g.columns):
        entry = lookup(data, column)
        row.values[column.key] = None if entry is None else entry.get("score")
        ci = None if entry is None else entry.get("ci95")
        row.ci[column.key] = None if ci is None else (float(ci[0]), float(ci[1]))
        if entry is not None:
            row.counts[column.key] = int(entry.get("n", 0))
            row.unparseable[column.key] = int(entry.get("n_unparseable", 0))
            row.failed[column.key] = int(entry.get("n_failed", 0))
    return row


def _extras_notes(scores: RunScores) -> list[str]:
    notes = []
    if scores.pass_at_k is not None and scores.pass_at_k.overall:
        curve = ", ".join(f"@{k} {value:.1f}" for k, value in sorted(scores.pass_at_k.overall.items()))
        notes.append(
            f"pass@k over {scores.pass_at_k.n_samples} samples per item ({scores.pass_at_k.n_items} items): {curve}"
        )
    if scores.agreement is not None:
        agreement = scores.agreement
        pearson = "undefined" if agreement.pearson is None else f"{agreement.pearson:.3f}"
        accuracy = "–" if agreement.accuracy is None else f"{agreement.accuracy:.3f}"
        notes.append(
            f"judge vs human judgements ({agreement.n} items): Pearson {pearson}, accuracy {accuracy}"
            + (f"; {agreement.n_without_judge} without a judge decision" if agreement.n_without_judge else "")
        )
    return notes


def run_rows(run: LoadedRun, groups: Sequence[ColumnGroup]) -> list[Row]:
    """The run's row, then one row per extra extraction mode."""
    scores = run.scores
    data = scores.model_dump(mode="json")
    marker = partial_label(scores)
    label = f"{run.label} ({marker})" if marker else run.label
    row = _row(label, data, groups)
    row.spec = scores.run.model
    row.settings = run_settings_note(run.rundir)
    settings = [f"{label}: {row.settings}"] if row.settings else []
    row.notes = settings + list(scores.run.notes) + _extras_notes(scores) + departure_notes(run.rundir, label)
    row.partial = partial_reason(scores.run)
    row.caveats = run_caveats(label, scores)
    row.dataset = scores.run.dataset_fingerprint
    cost = scores.run.cost
    if cost is not None:
        row.cost_usd = cost.usd
        row.cost = cost.summary()
        if cost.requests or cost.cached or (cost.requests_without_usage and cost.usd is None):
            row.notes.append(f"{label}: cost {row.cost}")
    rows = [row]
    for name, mode in data.get("extraction_modes", {}).items():
        extra = _row(f"{label} [{name} extraction]", mode, groups)
        extra.spec = row.spec
        extra.partial = row.partial
        extra.dataset = row.dataset
        extra.notes = [
            f"{label}: {name} extraction guessed {mode['n_fallback']} answer(s) at random (seeded) and reads "
            f"{len(mode['differs'])} reply(ies) differently from the strict extraction"
        ]
        rows.append(extra)
    return rows


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
    rows = [row for run in runs for row in run_rows(run, groups)]
    rows.extend(reference_rows(suite, references))
    models = {run.label: run.scores.run.model for run in runs if run.label != run.scores.run.model}
    notes = dataset_notes([(run.label, run.scores) for run in runs])
    return Table(groups=groups, rows=rows, notes=notes, models=models)
