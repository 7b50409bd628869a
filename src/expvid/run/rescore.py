"""Scoring without a model: re-scoring a run directory, or scoring predictions made elsewhere.

External predictions are JSONL lines `{"id", "response"}` or `{"id", "task", "response"}`. An id
is matched to an item as the run writes it (`"tools/17"`), or as the release writes it (`17`) with
the task given or unambiguous. Every line that cannot be matched is reported with its file:line,
and nothing is scored until they all match (a silently dropped prediction would change the score).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expvid.run.config import EvalConfig
from expvid.run.cost import run_extras
from expvid.run.evaluate import make_suite_named, refuse_uncountable, suite_settings_record
from expvid.run.judge_choice import JudgeChoice
from expvid.run.manifest import new_manifest
from expvid.run.progress import run_progress
from expvid.run.rundir import AppendLog, RunDir
from expvid.run.scoring_phase import DatasetPrint, RunScores, ScoringInputs, judge_and_score
from expvid.run.selection import select_records, suite_task_names
from expvid.run.terminal import message_console
from expvid.schema import DataError, Item, JudgeSettings, Prediction, RecordProblem, read_jsonl
from expvid.schema.dataset import Dataset


def _rescoring_settings(manifest: Any, config: EvalConfig, changes: dict[str, Any]) -> dict[str, Any]:
    """The run's suite settings with `changes` applied; only scoring settings may change on re-scoring
    (the others changed what the model was asked, and its answers were made without them)."""
    recorded = manifest.config.get("suite_settings")
    settings = dict(recorded) if isinstance(recorded, dict) else dict(config.suite_settings)
    if changes:
        from expvid.suites.registry import settings_model

        scoring = settings_model(manifest.suite).scoring_keys()
        fixed = [key for key in changes if key not in scoring]
        if fixed:
            raise DataError(
                f"-S {fixed[0]} changes what the model was asked; it cannot change when re-scoring "
                f"(scoring settings of {manifest.suite}: {', '.join(sorted(scoring)) or 'none'})"
            )
    return {**settings, **changes}


async def rescore_run(
    run_dir: Path,
    *,
    judge: JudgeChoice,
    show_progress: bool = True,
    settings: dict[str, Any] | None = None,
) -> RunScores:
    """Score a run again from its predictions (the model is not called; frames are not decoded).

    Only the annotations must be those the run was made on; the media need not be present.
    `settings` changes the suite's scoring settings (`-S judge_input=stripped`); they are recorded.
    """
    rundir = RunDir(run_dir)
    manifest = rundir.read_manifest()
    recorded_settings = manifest.config.get("settings")
    if not isinstance(recorded_settings, dict):
        raise DataError(f"{rundir.manifest_path}: no run settings recorded")
    config = EvalConfig.model_validate(recorded_settings)
    suite = make_suite_named(manifest.suite, _rescoring_settings(manifest, config, dict(settings or {})))
    if settings:
        config = config.model_copy(update={"suite_settings": {**config.suite_settings, **settings}})
        manifest.config["settings"] = config.model_dump(mode="json", exclude={"backend_options"})
        manifest.config["suite_settings"] = suite_settings_record(suite)
    dataset = suite.load(config.data, strict=False, check_media=False)
    refuse_uncountable(dataset, config.tasks)
    recorded = manifest.annotations_fingerprint or manifest.dataset_fingerprint
    if recorded and dataset.annotations_fingerprint() != recorded:
        raise DataError(
            f"{config.data}: the annotation files changed since run {run_dir} was made "
            f"(fingerprint {dataset.annotations_fingerprint()[:12]} vs {recorded[:12]})"
        )
    selection = select_records(dataset, config.tasks, config.limit, suite_task_names(suite))
    cache = config.cache_dir / "responses" if config.cache_dir else None
    run_judge = judge.build(suite, selection.items, cache)
    if run_judge is not None:
        rundir.write_manifest(manifest.model_copy(update={"judge": run_judge.manifest_settings()}))
    fingerprint = DatasetPrint(
        manifest.dataset_fingerprint,
        recorded,
        covers_media=manifest.annotations_fingerprint is not None,
    )
    with run_progress(message_console(stderr=True), show_progress) as progress:
        return await judge_and_score(
            suite,
            rundir,
            ScoringInputs(
                selection, rundir.predictions(), manifest.model, fingerprint, samples=config.samples
            ),
            judge=run_judge,
            judge_concurrency=judge.concurrency,
            config=config,
            progress=progress,
            extras=run_extras(rundir.root, manifest.config),
        )


def match_predictions(path: Path, dataset: Dataset) -> tuple[dict[str, Prediction], list[RecordProblem]]:
    """Map each external line to an item; problems name file:line."""
    by_id = {item.id: item for item in dataset.items}
    by_source: dict[str, list[Item]] = {}
    for item in dataset.items:
        by_source.setdefault(str(item.source_id), []).append(item)
    matched: dict[str, Prediction] = {}
    problems: list[RecordProblem] = []
    seen_line: dict[str, int] = {}
    for number, record in read_jsonl(path):
        if isinstance(record, RecordProblem):
            problems.append(record)
            continue
        raw_id, task, response = record.get("id"), record.get("task"), record.get("response")
        if raw_id is None or (response is not None and not isinstance(response, str)):
            problems.append(RecordProblem(path, number, 'expected {"id", "response"} with a string response'))
            continue
        found = _find(str(raw_id), task, by_id, by_source)
        if isinstance(found, str):
            problems.append(RecordProblem(path, number, found))
            continue
        item = found
        if item.id in seen_line:
            problems.append(
                RecordProblem(
                    path, number, f"second prediction for {item.id} (first on line {seen_line[item.id]})"
                )
            )
            continue
        seen_line[item.id] = number
        given_error = record.get("error")  # why another tool has no reply (its own failure message)
        error = None if response is not None else str(given_error or "no response in the predictions file")
        matched[item.id] = Prediction(
            item_id=item.id,
            task=item.task,
            model="external",
            response=response,
            error=error,
            meta={"line": number},
        )
    return matched, problems


def _find(raw_id: str, task: Any, by_id: dict[str, Item], by_source: dict[str, list[Item]]) -> Item | str:
    if task is not None:
        item = by_id.get(f"{task}/{raw_id}") or by_id.get(raw_id)
        return item if item is not None and item.task == task else f"no item {raw_id!r} in task {task!r}"
    if raw_id in by_id:
        return by_id[raw_id]
    candidates = by_source.get(raw_id, [])
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        tasks = ", ".join(sorted(c.task for c in candidates))
        return f'id {raw_id!r} is ambiguous (tasks {tasks}); add a "task" field'
    return f"no item with id {raw_id!r}"


async def score_external(
    *,
    suite: str,
    data: Path,
    predictions: Path,
    out: Path,
    judge: JudgeChoice,
    show_progress: bool = True,
    settings: dict[str, Any] | None = None,
    model: str | None = None,
) -> RunScores:
    """Score an external predictions file; writes a run directory to `out` (its model `model`, by
    default "external:<file name>"). `settings` are the suite's settings (`-S language=zh`)."""
    options = dict(settings or {})
    the_suite = make_suite_named(suite, options)
    dataset = the_suite.load(data, strict=False, check_media=False)
    refuse_uncountable(dataset)
    matched, problems = match_predictions(predictions, dataset)
    if problems:
        raise DataError(problems)
    if not matched:
        raise DataError(f"{predictions}: no predictions matched an item of {data}")
    # The tasks the file answers, all of their records: an item without a prediction leaves the
    # run incomplete (and says so), an invalid record of those tasks is scored 0.
    tasks = [task for task in dataset.by_task() if any(p.task == task for p in matched.values())]
    selection = select_records(dataset, tasks, None, suite_task_names(the_suite))
    config = EvalConfig(
        suite=suite,
        data=data,
        model=model or f"external:{predictions.name}",
        out=out,
        tasks=tasks,
        suite_settings=options,
    )
    rundir = RunDir(out)
    if rundir.predictions_path.exists():
        rundir.predictions_path.unlink()  # the file is the source of truth; re-import it whole
    run_judge = judge.build(the_suite, selection.items, None)
    annotations = dataset.annotations_fingerprint()
    rundir.write_manifest(
        new_manifest(
            config,
            command=["expvid", "score", "--predictions", str(predictions)],
            dataset=annotations,
            samplers={},
            judge=run_judge.manifest_settings() if run_judge else None,
            backend={"kind": "external", "file": str(predictions.resolve())},
            generation={},
            suite_settings=suite_settings_record(the_suite),
        )
    )
    with AppendLog(rundir.predictions_path) as log:
        for prediction in matched.values():
            log.append(prediction)
    fingerprint = DatasetPrint(annotations, annotations, covers_media=False)
    with run_progress(message_console(stderr=True), show_progress) as progress:
        return await judge_and_score(
            the_suite,
            rundir,
            ScoringInputs(selection, {(k, 0): v for k, v in matched.items()}, config.model, fingerprint),
            judge=run_judge,
            judge_concurrency=judge.concurrency,
            config=config,
            progress=progress,
        )


__all__ = ["JudgeChoice", "JudgeSettings", "match_predictions", "rescore_run", "score_external"]
