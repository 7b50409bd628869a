"""Paired comparison of two runs on the items both scored (same dataset, same item ids).

The datasets must be the same: the same annotation files always, and the same media (names and
sizes) when both runs recorded them, so two runs on different partial downloads are refused. The
comparison is on the items both runs scored; a table of per-task counts (records, scored by each,
compared) shows what that leaves out, and partial or incomplete runs are named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from expvid.run.cost import RunCost
from expvid.run.report.caveats import unfinished_reason
from expvid.run.report.display_names import display_names
from expvid.run.rundir import RunDir
from expvid.run.scoring_phase import RunScores, RunSummary, read_item_scores, read_scores
from expvid.schema import DataError, ItemScore
from expvid.scoring import PairedResult, paired_comparison
from expvid.suites.registry import get_suite


@dataclass(frozen=True)
class TaskCounts:
    """Per task: records each run covers (None: its scores predate the count), items each scored,
    and items both scored (the ones compared)."""

    task: str
    records_a: int | None
    records_b: int | None
    scored_a: int
    scored_b: int
    compared: int


@dataclass
class Comparison:
    results: dict[str, PairedResult]
    counts: list[TaskCounts]
    notes: list[str] = field(default_factory=list)
    #: What each run directory cost (None: its scores predate cost accounting).
    costs: tuple[RunCost | None, RunCost | None] = (None, None)
    #: Who A and B are: "display name: model spec (run directory)".
    runs: tuple[str, str] | None = None


def _annotations(run: RunSummary) -> str | None:
    return run.annotations_fingerprint or (None if run.media_fingerprinted else run.dataset_fingerprint)


def _check_same_data(run_a: Path, run_b: Path, a: RunSummary, b: RunSummary) -> list[str]:
    if _annotations(a) != _annotations(b):
        raise DataError(
            f"{run_a} and {run_b} were scored on different datasets (annotation fingerprints differ)"
        )
    if a.media_fingerprinted and b.media_fingerprinted:
        if a.dataset_fingerprint != b.dataset_fingerprint:
            raise DataError(
                f"{run_a} and {run_b} were run on different media (a partial or different download: the "
                "media fingerprints differ; `expvid data check` lists missing files)"
            )
        return []
    if a.media_fingerprinted or b.media_fingerprinted:
        return [
            "one run records no media fingerprint (external predictions or an older run): media not compared"
        ]
    return []


def compare_runs(run_a: Path, run_b: Path, *, n_boot: int = 2000, seed: int = 0) -> Comparison:
    dir_a, dir_b = RunDir(run_a), RunDir(run_b)
    scores_a, scores_b = read_scores(dir_a), read_scores(dir_b)
    if scores_a.run.suite != scores_b.run.suite:
        raise DataError(f"{run_a} and {run_b} evaluate different suites")
    notes = _check_same_data(run_a, run_b, scores_a.run, scores_b.run)
    items_a, items_b = read_item_scores(dir_a), read_item_scores(dir_b)
    common = {s.item_id for s in items_a} & {s.item_id for s in items_b}
    if not common:
        raise DataError(f"{run_a} and {run_b} have no scored item in common")
    suite = get_suite(scores_a.run.suite)
    results = paired_comparison(
        [s for s in items_a if s.item_id in common],
        [s for s in items_b if s.item_id in common],
        suite.levels,
        n_boot=n_boot,
        seed=seed,
    )
    for name, scores in (("A", scores_a), ("B", scores_b)):
        if scores.run.partial:
            notes.append(f"run {name} is partial ({scores.run.partial})")
        if not scores.run.complete:
            notes.append(f"run {name} is incomplete ({scores.run.n_missing} item(s) without a prediction)")
        unfinished = unfinished_reason(scores.run)
        if unfinished:
            notes.append(f"run {name} is partial, not finished: {unfinished}")
    counts = _task_counts(scores_a, scores_b, items_a, items_b, common)
    left_out = sum(max(c.scored_a, c.scored_b) - c.compared for c in counts)
    if left_out:
        notes.append(f"{left_out} item(s) scored by only one run are left out of the comparison")
    specs = (scores_a.run.model, scores_b.run.model)
    names = display_names(specs, (run_a.name, run_b.name))
    runs = tuple(
        f"{name}: `{spec}` ({path})" for name, spec, path in zip(names, specs, (run_a, run_b), strict=True)
    )
    return Comparison(
        results=results,
        counts=counts,
        notes=notes,
        costs=(scores_a.run.cost, scores_b.run.cost),
        runs=(runs[0], runs[1]),
    )


def _task_counts(
    scores_a: RunScores,
    scores_b: RunScores,
    items_a: list[ItemScore],
    items_b: list[ItemScore],
    common: set[str],
) -> list[TaskCounts]:
    tasks = list(dict.fromkeys([*scores_a.tasks, *scores_b.tasks]))
    counts = []
    for task in tasks:
        counts.append(
            TaskCounts(
                task=task,
                records_a=scores_a.tasks[task].n_records if task in scores_a.tasks else 0,
                records_b=scores_b.tasks[task].n_records if task in scores_b.tasks else 0,
                scored_a=sum(1 for s in items_a if s.task == task),
                scored_b=sum(1 for s in items_b if s.task == task),
                compared=sum(1 for s in items_a if s.task == task and s.item_id in common),
            )
        )
    return counts


def format_comparison(comparison: Comparison | dict[str, PairedResult]) -> str:
    if not isinstance(comparison, Comparison):
        comparison = Comparison(results=comparison, counts=[])
    lines = [
        "| statistic | A | B | A - B | 95% CI | p | items | videos |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for name, r in comparison.results.items():
        ci = "–" if r.ci95 is None else f"[{r.ci95[0]:+.1f}, {r.ci95[1]:+.1f}]"
        p = "–" if r.p_value is None else f"{r.p_value:.3f}"
        lines.append(
            f"| {name} | {r.score_a:.1f} | {r.score_b:.1f} | {r.diff:+.1f} | {ci} | {p} | {r.n_items} | {r.n_clusters} |"
        )
    if comparison.runs:  # who A and B are: display name, spec, directory
        lines += ["", *(f"- {name} = {run}" for name, run in zip("AB", comparison.runs, strict=True))]
    if comparison.counts:
        lines += [
            "",
            "| task | A: scored of records | B: scored of records | compared |",
            "|---|---:|---:|---:|",
        ]
        for c in comparison.counts:
            a = f"{c.scored_a} of {'–' if c.records_a is None else c.records_a}"
            b = f"{c.scored_b} of {'–' if c.records_b is None else c.records_b}"
            lines.append(f"| {c.task} | {a} | {b} | {c.compared} |")
    if any(cost is not None for cost in comparison.costs):
        lines += [
            "",
            "| run | cost (USD) | requests | tokens in | tokens out | price |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for name, cost in zip(("A", "B"), comparison.costs, strict=True):
            if cost is None:
                lines.append(f"| {name} | not recorded | – | – | – | – |")
                continue
            usd = "unknown" if cost.usd is None else f"{cost.usd:.4f}"
            price = "none known" if cost.price is None else f"{cost.price.label()} ({cost.price.source})"
            lines.append(
                f"| {name} | {usd} | {cost.requests} | {cost.prompt_tokens} | {cost.completion_tokens} | {price} |"
            )
    if comparison.notes:
        lines.append("")
        lines += [f"- {note}" for note in comparison.notes]
    return "\n".join(lines) + "\n"
