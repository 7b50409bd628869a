"""Score lmms-eval logs with expvid and put both tools' per-item scores side by side.

Writes into OUT a normal scored run directory (`manifest.json`, `predictions.jsonl`, `item_scores.jsonl`,
`scores.json`: model `external:lmms_eval_predictions.jsonl`) plus `lmms_eval_comparison.jsonl`, one line
per item: where it was logged (file:line, doc_id), lmms-eval's own per-item score (its metric value, on
0-1) and expvid's (earned / possible, extraction status and what was extracted), and whether they agree.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.export.lmms_eval_logs import LoggedSample, Matcher, lmms_eval_score, read_samples, sample_files
from expvid.schema import DataError, RecordProblem

PREDICTIONS = "lmms_eval_predictions.jsonl"
COMPARISON = "lmms_eval_comparison.jsonl"


@dataclass
class TaskComparison:
    lmms_task: str
    n: int = 0
    lmms_eval_sum: float = 0.0
    lmms_eval_n: int = 0
    expvid_earned: float = 0.0
    expvid_possible: float = 0.0
    agree: int = 0
    disagree: list[dict[str, Any]] = field(default_factory=list)

    @property
    def lmms_eval_mean(self) -> float | None:
        return 100 * self.lmms_eval_sum / self.lmms_eval_n if self.lmms_eval_n else None


@dataclass
class Comparison:
    out: Path
    tasks: dict[str, TaskComparison] = field(default_factory=dict)
    skipped_files: list[str] = field(default_factory=list)
    rows: int = 0


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
                return Path(str(metadata["exported_from"]))
    return None


def collect(logdir: Path, matcher: Matcher) -> tuple[list[tuple[str, LoggedSample]], list[str]]:
    """(item id, sample) for every logged line; files of other benchmarks are skipped and named."""
    files = sample_files(logdir)
    if not files:
        raise DataError(
            f"{logdir}: no lmms-eval samples_*.jsonl (run lmms-eval with --log_samples --output_path)"
        )
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
    if problems:
        raise DataError(problems)
    if not matched:
        raise DataError(f"{logdir}: no {matcher.suite} samples among: " + "; ".join(skipped))
    return matched, skipped


async def compare_logs(
    logdir: Path,
    *,
    suite: str,
    data: Path,
    out: Path,
    judge: Any,
    show_progress: bool = True,
) -> Comparison:
    from expvid.run.rescore import score_external

    matcher = Matcher(suite, data.resolve())
    matched, skipped = collect(logdir, matcher)
    out.mkdir(parents=True, exist_ok=True)
    predictions = out / PREDICTIONS
    with predictions.open("w", encoding="utf-8") as handle:
        for item_id, sample in matched:
            handle.write(json.dumps({"id": item_id, "response": sample.response}, ensure_ascii=False) + "\n")
    await score_external(
        suite=suite, data=data, predictions=predictions, out=out, judge=judge, show_progress=show_progress
    )
    scores = {}
    for line in (out / "item_scores.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        scores[record["item_id"]] = record
    comparison = Comparison(out=out, skipped_files=skipped)
    with (out / COMPARISON).open("w", encoding="utf-8") as handle:
        for item_id, sample in matched:
            mine = scores.get(item_id)
            theirs = lmms_eval_score(sample.metrics)
            expvid_value = mine["earned"] / mine["possible"] if mine and mine["possible"] else None
            agree = None if theirs is None or expvid_value is None else abs(theirs[1] - expvid_value) < 1e-9
            row = {
                "item": item_id,
                "lmms_task": sample.lmms_task,
                "where": sample.where,
                "doc_id": sample.doc_id,
                "lmms_eval": None if theirs is None else {"metric": theirs[0], "score": theirs[1], "value": sample.metrics[theirs[0]]},
                "expvid": None if mine is None else {
                    "score": expvid_value, "earned": mine["earned"], "possible": mine["possible"],
                    "status": mine["status"], "extracted": mine.get("extracted"),
                },
                "agree": agree,
            }  # fmt: skip
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            comparison.rows += 1
            task = comparison.tasks.setdefault(sample.lmms_task, TaskComparison(sample.lmms_task))
            task.n += 1
            if theirs is not None:
                task.lmms_eval_sum += theirs[1]
                task.lmms_eval_n += 1
            if mine is not None:
                task.expvid_earned += mine["earned"]
                task.expvid_possible += mine["possible"]
            if agree:
                task.agree += 1
            elif agree is False:
                task.disagree.append(row)
    return comparison


def summary_lines(comparison: Comparison, limit: int = 10) -> list[str]:
    """A Markdown table per lmms-eval task, then the first disagreements."""
    lines = [
        "| lmms-eval task | items | lmms-eval | expvid (pooled) | agree | differ |",
        "|---|---|---|---|---|---|",
    ]
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name, task in sorted(comparison.tasks.items()):
        theirs = "n/a" if task.lmms_eval_mean is None else f"{task.lmms_eval_mean:.1f}"
        mine = f"{100 * task.expvid_earned / task.expvid_possible:.1f}" if task.expvid_possible else "n/a"
        lines.append(f"| {name} | {task.n} | {theirs} | {mine} | {task.agree} | {len(task.disagree)} |")
        grouped[name] = task.disagree
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
