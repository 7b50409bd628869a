"""Score lmms-eval logs with expvid and put both tools' per-item scores side by side.

Writes into OUT a normal scored run directory (`manifest.json`, `predictions.jsonl`, `item_scores.jsonl`,
`scores.json`: model `external:lmms_eval_predictions.jsonl`) plus `lmms_eval_comparison.jsonl`, one line
per item: where it was logged (file:line, doc_id), lmms-eval's own per-item score (its metric value, on
0-1) and expvid's (earned / possible, extraction status and what was extracted), and whether they agree.

Task scores are compared with what lmms-eval itself reported: the value of the task's metric in the
`<date>_results.json` it wrote next to the samples (`results[task]["<metric>,<filter>"]`, a number or,
for a task whose metric reports several numbers, a dict whose `overall_acc` (or `overall`, ...) is
the headline), never with an average of
the per-item values, which differs wherever items weigh differently (per-blank accuracy pools blanks).
The reported value's scale (0-1 or 0-100) is read off the per-item values it aggregates.

lmms-eval writes one folder per model under its `--output_path` (`<model_name_sanitized>/`). A log
folder holding several models' samples is scored model by model, each into `OUT/<model folder>/`,
before anything is written: one model's answers are never mixed with another's.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.export.agreement import TaskAgreement, agreement, expvid_value, item_scores
from expvid.export.lmms_eval_logs import (
    LoggedSample,
    Matcher,
    lmms_eval_score,
    lmms_task_of,
    read_samples,
    sample_files,
)
from expvid.schema import DataError, RecordProblem

PREDICTIONS = "lmms_eval_predictions.jsonl"
COMPARISON = "lmms_eval_comparison.jsonl"


@dataclass
class TaskComparison(TaskAgreement):
    """An lmms-eval task's agreement; the mean of lmms-eval's per-item values (`theirs_mean`) is not
    what it reports for a task whose items weigh differently: that is `reported`."""

    #: What lmms-eval reported for the task (results.json), on 0-100, and where it was read.
    reported: float | None = None
    reported_from: str | None = None


@dataclass
class Comparison:
    out: Path
    tasks: dict[str, TaskComparison] = field(default_factory=dict)
    skipped_files: list[str] = field(default_factory=list)
    rows: int = 0
    #: The lmms-eval model folder the samples came from (its `model_name_sanitized`).
    model: str | None = None


def data_from_results(logdir: Path) -> Path | None:
    """The benchmark folder an exported task package recorded (`metadata.exported_from` in lmms-eval's results.json)."""
    for path in sorted(logdir.rglob("*results*.json"), reverse=True):
        try:
            configs = json.loads(path.read_text(encoding="utf-8")).get("configs", {})
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
        for config in configs.values() if isinstance(configs, dict) else []:
            metadata = config.get("metadata") if isinstance(config, dict) else None
            if isinstance(metadata, dict) and metadata.get("exported_from"):
                exported = Path(str(metadata["exported_from"]))
                # The exporting machine's folder: only a default where it exists here too.
                return exported if exported.is_dir() else None
    return None


def model_folders(logdir: Path) -> dict[Path, list[Path]]:
    """Sample files grouped by the folder lmms-eval wrote them to (one per model), in name order."""
    files = sample_files(logdir)
    if not files:
        raise DataError(
            f"{logdir}: no lmms-eval samples_*.jsonl (run lmms-eval with --log_samples --output_path)"
        )
    groups: dict[Path, list[Path]] = {}
    for path in files:
        groups.setdefault(path.parent, []).append(path)
    return dict(sorted(groups.items()))


def collect(
    logdir: Path, matcher: Matcher, files: list[Path] | None = None
) -> tuple[list[tuple[str, LoggedSample]], list[str]]:
    """(item id, sample) for every logged line of `files` (default: all under `logdir`); files of other
    benchmarks are skipped and named; an item logged twice is an error naming both places."""
    if files is None:
        files = [path for group in model_folders(logdir).values() for path in group]
    matched: list[tuple[str, LoggedSample]] = []
    problems: list[RecordProblem] = []
    skipped = []
    for path in files:
        samples = list(read_samples(path))
        first = next((s for s in samples if isinstance(s, LoggedSample)), None)
        if first is None or (first.expvid_id() is None and not matcher.owns(first.lmms_task)):
            skipped.append(f"{path} (task {first.lmms_task if first else '?'} is not a {matcher.suite} task)")
            continue
        for sample in samples:
            if isinstance(sample, RecordProblem):
                problems.append(sample)
                continue
            try:
                matched.append((matcher.item_id(sample), sample))
            except (LookupError, KeyError) as error:
                problems.append(RecordProblem(sample.path, sample.line, str(error).strip("'\"")))
    seen: dict[str, LoggedSample] = {}
    for item_id, sample in matched:
        first = seen.setdefault(item_id, sample)
        if first is not sample:
            problems.append(
                RecordProblem(sample.path, sample.line, f"{item_id} was logged before, at {first.where}")
            )
    if problems:
        raise DataError(problems)
    if not matched:
        raise DataError(f"{logdir}: no {matcher.suite} samples among: " + "; ".join(skipped))
    return matched, skipped


def reported_scores(files: list[Path]) -> dict[str, tuple[Any, str]]:
    """lmms-eval task -> (the value it reported, "file: key"), from the `*_results.json` lmms-eval
    wrote beside these samples (the one of the same run date, else the newest in the folder)."""
    found: dict[str, tuple[Any, str]] = {}
    for samples in files:
        match = re.match(r"^(?P<date>.*?)_?samples_", samples.name)
        date = match["date"] if match else ""
        candidates = sorted(samples.parent.glob("*results*.json"), reverse=True)
        same_run = [path for path in candidates if date and path.name.startswith(date)]
        for path in same_run or candidates[:1]:
            try:
                results = json.loads(path.read_text(encoding="utf-8")).get("results", {})
            except (OSError, json.JSONDecodeError, AttributeError):
                continue
            task = lmms_task_of(samples)
            entry = results.get(task) if isinstance(results, dict) else None
            if not isinstance(entry, dict):
                continue
            for key, value in entry.items():
                if key == "alias" or "_stderr" in key or "," not in key:
                    continue
                found.setdefault(task, (value, f"{path.name}: results.{task}.{key}"))
                break
    return found


def _headline(value: Any) -> float | None:
    """The task score in a reported value: a number, or the headline of a metric dict."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        for key in ("overall_acc", "overall", "score", "acc", "accuracy"):
            inner = value.get(key)
            if isinstance(inner, int | float) and not isinstance(inner, bool):
                return float(inner)
    return None


def _as_percent(value: float, per_item_mean: float | None) -> float:
    """A reported value on 0-100: lmms-eval tasks report 0-1 or 0-100; the one nearer the per-item mean."""
    if per_item_mean is None or value > 1.0:
        return value
    return value * 100 if abs(value * 100 - per_item_mean) <= abs(value - per_item_mean) else value


async def compare_models(
    logdir: Path,
    *,
    suite: str,
    data: Path,
    out: Path,
    judge: Any,
    show_progress: bool = True,
) -> list[Comparison]:
    """`compare` for every model folder under `logdir`; with several, each is scored into `out/<folder>`.
    Every folder's samples are matched (and refused, if they must be) before anything is written."""
    matcher = Matcher(suite, data.resolve())
    groups = model_folders(logdir)
    prepared = [(folder, files, *collect(logdir, matcher, files)) for folder, files in groups.items()]
    several = len(prepared) > 1
    comparisons = []
    for folder, files, matched, skipped in prepared:
        target = out / folder.name if several else out
        comparison = await _compare_one(matched, skipped, files, suite, data, target, judge, show_progress)
        comparison.model = folder.name
        comparisons.append(comparison)
    return comparisons


async def _compare_one(
    matched: list[tuple[str, LoggedSample]],
    skipped: list[str],
    files: list[Path],
    suite: str,
    data: Path,
    out: Path,
    judge: Any,
    show_progress: bool,
) -> Comparison:
    from expvid.run.rescore import score_external

    out.mkdir(parents=True, exist_ok=True)
    predictions = out / PREDICTIONS
    with predictions.open("w", encoding="utf-8") as handle:
        for item_id, sample in matched:
            handle.write(json.dumps({"id": item_id, "response": sample.response}, ensure_ascii=False) + "\n")
    await score_external(
        suite=suite, data=data, predictions=predictions, out=out, judge=judge, show_progress=show_progress
    )
    scores = item_scores(out)
    comparison = Comparison(out=out, skipped_files=skipped)
    with (out / COMPARISON).open("w", encoding="utf-8") as handle:
        for item_id, sample in matched:
            mine = scores.get(item_id)
            theirs = lmms_eval_score(sample.metrics)
            their_score, expvid = None if theirs is None else theirs[1], expvid_value(mine)
            row = {
                "item": item_id,
                "lmms_task": sample.lmms_task,
                "where": sample.where,
                "doc_id": sample.doc_id,
                "lmms_eval": None if theirs is None else {"metric": theirs[0], "score": theirs[1], "value": sample.metrics[theirs[0]]},
                "expvid": None if mine is None else {
                    "score": expvid, "earned": mine["earned"], "possible": mine["possible"],
                    "status": mine["status"], "extracted": mine.get("extracted"),
                },
                "agree": agreement(their_score, expvid),
            }  # fmt: skip
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            comparison.rows += 1
            task = comparison.tasks.setdefault(sample.lmms_task, TaskComparison())
            task.add(their_score, mine, row)
    for name, (value, where) in reported_scores(files).items():
        reported_task = comparison.tasks.get(name)
        headline = _headline(value)
        if reported_task is not None and headline is not None:
            reported_task.reported = _as_percent(headline, reported_task.theirs_mean)
            reported_task.reported_from = where
    return comparison


def summary_lines(comparison: Comparison | list[Comparison], limit: int = 10) -> list[str]:
    """A Markdown table per lmms-eval task (per model when there are several), then the first
    disagreements. "lmms-eval" is the score lmms-eval reported (results.json); without one, the mean
    of its per-item values is shown, marked with *."""
    if isinstance(comparison, list):
        if len(comparison) == 1:
            return summary_lines(comparison[0], limit)
        lines: list[str] = []
        for one in comparison:
            lines += [f"### {one.model} ({one.out})", "", *summary_lines(one, limit), ""]
        return lines[:-1]
    lines = [
        "| lmms-eval task | items | lmms-eval | expvid | agree | differ |",
        "|---|---|---|---|---|---|",
    ]
    notes = []
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, task in sorted(comparison.tasks.items()):
        if task.reported is not None:
            theirs = f"{task.reported:.2f}"
        else:
            theirs = "n/a" if task.theirs_mean is None else f"{task.theirs_mean:.2f}*"
        mine = "n/a" if task.expvid_score is None else f"{task.expvid_score:.2f}"
        lines.append(f"| {name} | {task.n} | {theirs} | {mine} | {task.agree} | {len(task.disagree)} |")
        grouped[name] = task.disagree
        if (
            task.reported is not None
            and task.expvid_score is not None
            and abs(task.reported - task.expvid_score) >= 0.01
        ):
            notes.append(
                f"{name}: lmms-eval reported {task.reported:.2f} ({task.reported_from}), expvid scores {task.expvid_score:.2f}"
            )
    if any(task.reported is None for task in comparison.tasks.values()):
        notes.append(
            "* no results.json beside the samples: the mean of lmms-eval's per-item values, not its reported score"
        )
    lines += notes
    shown = [row for rows in grouped.values() for row in rows][:limit]
    if shown:
        lines.append("")
        lines.append("first disagreements (lmms-eval vs expvid):")
        for row in shown:
            theirs, mine = row["lmms_eval"], row["expvid"]
            lines.append(
                f"- {row['item']} ({row['where']}): lmms-eval {theirs['score']:.2f}, expvid {mine['score']:.2f} "
                f"[{mine['status']}, extracted {mine['extracted']!r}]"
            )
    for skipped in comparison.skipped_files:
        lines.append(f"skipped {skipped}")
    return lines
