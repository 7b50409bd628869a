"""`expvid score --from inspect LOGDIR`: Inspect AI's eval logs of an exported task, scored by expvid.

The logs are read with Inspect's own reader (`inspect_ai.log.list_eval_logs` / `read_eval_log`, so
both its `.eval` and `.json` formats, whatever version wrote them): install `inspect-ai` beside
expvid. Each log of a task `expvid export inspect` wrote says which suite, settings and release it
came from (its `eval.metadata["expvid"]`); logs of other tasks are skipped and named.

Per model (Inspect's `eval.model`), the replies of epoch 1 become a predictions file, scored by
`expvid.run.rescore.score_external` into OUT (or `OUT/<model>` with several models): a normal run
directory (model `inspect:<model>`) with the paper's table, `expvid report` and `expvid view`. A
sample Inspect could not run (its `error`) is a failed prediction, scored 0 and counted; an item
the export left out (unreadable media) or that no log holds leaves the run partial and says so.
`inspect_comparison.jsonl` puts Inspect's score of each sample (the exported scorer's) beside
expvid's, and the summary counts where they agree.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.export.agreement import TaskAgreement, agreement, expvid_value, item_scores
from expvid.schema import DataError

PREDICTIONS = "inspect_predictions.jsonl"
COMPARISON = "inspect_comparison.jsonl"
SCORER = "expvid_scorer"


@dataclass
class LoggedSample:
    item_id: str
    task: str
    response: str | None
    error: str | None
    #: The exported scorer's value (0-1) for this sample, when Inspect scored it.
    inspect_score: float | None
    where: str


@dataclass
class ModelLogs:
    """The samples one model answered, from one or more logs of exported tasks."""

    model: str
    export: dict[str, Any]
    samples: dict[str, LoggedSample] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    other_epochs: int = 0


@dataclass
class InspectComparison:
    model: str
    out: Path
    tasks: dict[str, TaskAgreement] = field(default_factory=dict)
    other_epochs: int = 0


def _inspect_log_api() -> Any:
    try:
        import inspect_ai.log as api
    except ImportError:
        raise DataError(
            "reading Inspect logs needs inspect-ai in this environment: pip install inspect-ai"
        ) from None
    return api


def read_logs(logdir: Path) -> tuple[list[ModelLogs], list[str]]:
    """The exported tasks' samples per model, and the logs skipped (other tasks, unfinished runs)."""
    api = _inspect_log_api()
    if not logdir.is_dir():
        raise DataError(f"{logdir}: not a folder of Inspect logs")
    infos = api.list_eval_logs(str(logdir))
    if not infos:
        raise DataError(f"{logdir}: no Inspect eval logs (inspect eval ... --log-dir {logdir})")
    models: dict[str, ModelLogs] = {}
    skipped: list[str] = []
    for info in sorted(infos, key=lambda found: str(found.name)):
        log = api.read_eval_log(info)
        where = Path(str(info.name).removeprefix("file://")).name
        export = (log.eval.metadata or {}).get("expvid")
        if not isinstance(export, dict):
            skipped.append(f"{where} (task {log.eval.task}: not written by expvid export inspect)")
            continue
        if not log.samples:
            skipped.append(f"{where} (no samples: status {log.status})")
            continue
        group = models.setdefault(log.eval.model, ModelLogs(log.eval.model, export))
        if (group.export["suite"], group.export["fingerprint"]) != (export["suite"], export["fingerprint"]):
            raise DataError(
                f"{where}: model {log.eval.model} also has logs of another export "
                f"({export['suite']} {export['fingerprint'][:12]} vs {group.export['suite']} "
                f"{group.export['fingerprint'][:12]}); give them separate log folders"
            )
        group.logs.append(where)
        for sample in log.samples:
            if sample.epoch != 1:
                group.other_epochs += 1
                continue
            item_id = str((sample.metadata or {}).get("expvid_id", sample.id))
            if item_id in group.samples:
                raise DataError(
                    f"{where}: item {item_id} of {log.eval.model} was logged before, in {group.samples[item_id].where}"
                )
            group.samples[item_id] = _logged(sample, item_id, where)
    if not models:
        raise DataError(f"{logdir}: no log of a task written by expvid export inspect: " + "; ".join(skipped))
    return list(models.values()), skipped


def _logged(sample: Any, item_id: str, where: str) -> LoggedSample:
    error = sample.error.message if sample.error is not None else None
    output = sample.output
    response = output.completion if error is None and output is not None and output.choices else None
    score = (sample.scores or {}).get(SCORER)
    value = score.value if score is not None else None
    return LoggedSample(
        item_id=item_id,
        task=str((sample.metadata or {}).get("task", "")),
        response=response,
        error=error if error is not None else (None if response is not None else "Inspect logged no reply"),
        inspect_score=float(value)
        if isinstance(value, int | float) and not isinstance(value, bool)
        else None,
        where=where,
    )


def _folder(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model"


async def score_inspect_logs(
    logdir: Path,
    *,
    out: Path,
    judge: Any,
    suite: str | None = None,
    data: Path | None = None,
    settings: dict[str, Any] | None = None,
    show_progress: bool = True,
) -> list[InspectComparison]:
    """Score every model's logged replies with expvid into `out` (`out/<model>` for several models)."""
    from expvid.run.rescore import score_external

    models, _ = read_logs(logdir)
    if settings:  # the replies were made under the exported settings: only scoring ones may change
        from expvid.suites.registry import settings_model

        suites = {group.export["suite"] for group in models}
        fixed = sorted(
            key for name in suites for key in settings if key not in settings_model(name).scoring_keys()
        )
        if fixed:
            raise DataError(
                f"-S {fixed[0]} changes what the model was asked; the logs' answers were made without it"
            )
    comparisons = []
    for group in models:
        export = group.export
        if suite is not None and suite != export["suite"]:
            raise DataError(f"the logs are of the {export['suite']} suite (exported so), not {suite}")
        root = data or Path(export["exported_from"])
        if not root.is_dir():
            raise DataError(
                f"--data DIR is needed: the release the task was exported from ({root}) is not here"
            )
        target = out / _folder(group.model) if len(models) > 1 else out
        target.mkdir(parents=True, exist_ok=True)
        predictions = target / PREDICTIONS
        with predictions.open("w", encoding="utf-8") as handle:
            for sample in group.samples.values():
                line = {"id": sample.item_id, "response": sample.response, "error": sample.error}
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        await score_external(
            suite=export["suite"], data=root, predictions=predictions, out=target, judge=judge,
            show_progress=show_progress, settings={**export["settings"], **(settings or {})},
            model=f"inspect:{group.model}",
        )  # fmt: skip
        comparisons.append(_compare(group, target))
    return comparisons


def _compare(group: ModelLogs, target: Path) -> InspectComparison:
    scores = item_scores(target)
    comparison = InspectComparison(group.model, target, other_epochs=group.other_epochs)
    with (target / COMPARISON).open("w", encoding="utf-8") as handle:
        for sample in group.samples.values():
            mine = scores.get(sample.item_id)
            expvid = expvid_value(mine)
            theirs = sample.inspect_score
            row = {
                "item": sample.item_id, "task": sample.task, "where": sample.where, "inspect": theirs,
                "expvid": None if mine is None else {"score": expvid, "earned": mine["earned"],
                                                      "possible": mine["possible"], "status": mine["status"]},
                "agree": agreement(theirs, expvid),
            }  # fmt: skip
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            comparison.tasks.setdefault(sample.task, TaskAgreement()).add(theirs, mine, row)
    return comparison


def summary_lines(comparisons: list[InspectComparison], limit: int = 10) -> list[str]:
    """Per model: a table of Inspect's and expvid's scores per task and the item-by-item agreement."""
    lines: list[str] = []
    for comparison in comparisons:
        lines += [f"### {comparison.model} ({comparison.out})", "",
                  "| task | items | Inspect (mean) | expvid | agree | differ |", "|---|---|---|---|---|---|"]  # fmt: skip
        for name, task in sorted(comparison.tasks.items()):
            theirs = "n/a" if task.theirs_mean is None else f"{task.theirs_mean:.2f}"
            mine = "n/a" if task.expvid_score is None else f"{task.expvid_score:.2f}"
            lines.append(f"| {name} | {task.n} | {theirs} | {mine} | {task.agree} | {len(task.disagree)} |")
        if comparison.other_epochs:
            lines.append(f"{comparison.other_epochs} sample(s) of epochs after the first are not scored")
        shown = [row for task in comparison.tasks.values() for row in task.disagree][:limit]
        for row in shown:
            lines.append(
                f"differ: {row['item']} ({row['where']}): Inspect {row['inspect']}, expvid {row['expvid']}"
            )
        lines.append("")
    return lines[:-1]
