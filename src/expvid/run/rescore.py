"""Scoring without a model: re-scoring a run directory, or scoring predictions made elsewhere.

External predictions are JSONL lines `{"id", "response"}` or `{"id", "task", "response"}`. An id
is matched to an item as the run writes it (`"tools/17"`), or as the release writes it (`17`) with
the task given or unambiguous. Every line that cannot be matched is reported with its file:line,
and nothing is scored until they all match (a silently dropped prediction would change the score).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from expvid.run.config import EvalConfig
from expvid.run.evaluate import judge_spec, select_items
from expvid.run.manifest import new_manifest
from expvid.run.progress import run_progress
from expvid.run.rundir import AppendLog, RunDir
from expvid.run.scoring_phase import RunScores, ScoringInputs, judge_and_score
from expvid.schema import DataError, Item, JudgeSettings, Prediction, RecordProblem, read_jsonl
from expvid.suites.base import Dataset
from expvid.suites.protocol import EvalSuite, RunJudge
from expvid.suites.registry import get_suite


@dataclass(frozen=True)
class JudgeChoice:
    spec: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int = 4
    #: "raw" or "stripped" (ProMQA / SFE); None keeps the run's own choice.
    judge_input: str | None = None

    def options(self, cache_dir: Path | None) -> dict[str, Any]:
        options: dict[str, Any] = {"concurrency": self.concurrency, "cache_dir": cache_dir}
        if self.base_url:
            options["base_url"] = self.base_url
        if self.api_key_env:
            options["api_key_env"] = self.api_key_env
        return options


def _judge_for(
    suite: EvalSuite, items: list[Item], choice: JudgeChoice, cache: Path | None
) -> RunJudge | None:
    if not any(item.answer_type.value in ("blanks", "free_text") for item in items):
        return None
    return suite.build_judge(judge_spec(suite, choice.spec, choice.base_url), choice.options(cache))


async def rescore_run(run_dir: Path, *, judge: JudgeChoice, show_progress: bool = True) -> RunScores:
    """Score a run again from its predictions (the model is not called; frames are not decoded)."""
    rundir = RunDir(run_dir)
    manifest = rundir.read_manifest()
    settings = manifest.config.get("settings")
    if not isinstance(settings, dict):
        raise DataError(f"{rundir.manifest_path}: no run settings recorded")
    config = EvalConfig.model_validate(settings)
    if judge.judge_input is not None:
        config = EvalConfig.model_validate({**settings, "judge_input": judge.judge_input})
        manifest.config["settings"] = config.model_dump(mode="json", exclude={"backend_options"})
    try:
        suite = get_suite(manifest.suite, config.suite_settings())
    except (TypeError, ValueError) as error:
        raise DataError(f"suite {manifest.suite!r}: {error}") from None
    dataset = suite.load(config.data, strict=False, check_media=False)
    if manifest.dataset_fingerprint and dataset.fingerprint() != manifest.dataset_fingerprint:
        raise DataError(
            f"{config.data}: the dataset changed since run {run_dir} was made "
            f"(fingerprint {dataset.fingerprint()[:12]} vs {manifest.dataset_fingerprint[:12]})"
        )
    items = select_items(dataset, config.tasks, config.limit)
    cache = config.cache_dir / "responses" if config.cache_dir else None
    run_judge = _judge_for(suite, items, judge, cache)
    if run_judge is not None:
        rundir.write_manifest(manifest.model_copy(update={"judge": run_judge.manifest_settings()}))
    with run_progress(Console(stderr=True), show_progress) as progress:
        return await judge_and_score(
            suite=suite,
            rundir=rundir,
            inputs=ScoringInputs(items=items, predictions=rundir.predictions(), samples=config.samples),
            judge=run_judge,
            judge_concurrency=judge.concurrency,
            model=manifest.model,
            fingerprint=manifest.dataset_fingerprint,
            n_bootstrap=config.n_bootstrap,
            seed=config.seed or 0,
            progress=progress,
            human_judgments=config.human_judgments,
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
        error = None if response is not None else "no response in the predictions file"
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
    suite_options: dict[str, Any] | None = None,
) -> RunScores:
    """Score an external predictions file; writes a run directory (model "external") to `out`."""
    options = dict(suite_options or {})
    judge_input = {"judge_input": judge.judge_input} if judge.judge_input is not None else {}
    try:
        the_suite = get_suite(suite, {**options, **judge_input})
    except (TypeError, ValueError) as error:
        raise DataError(f"suite {suite!r}: {error}") from None
    dataset = the_suite.load(data, strict=False, check_media=False)
    matched, problems = match_predictions(predictions, dataset)
    if problems:
        raise DataError(problems)
    items = [item for item in dataset.items if item.id in matched]
    if not items:
        raise DataError(f"{predictions}: no predictions matched an item of {data}")
    tasks = sorted({item.task for item in items})
    config = EvalConfig(
        suite=suite,
        data=data,
        model=f"external:{predictions.name}",
        out=out,
        tasks=tasks,
        suite_options=options,
        judge_input=judge.judge_input,
    )
    rundir = RunDir(out)
    if rundir.predictions_path.exists():
        rundir.predictions_path.unlink()  # the file is the source of truth; re-import it whole
    run_judge = _judge_for(the_suite, items, judge, None)
    rundir.write_manifest(
        new_manifest(
            config,
            command=["expvid", "score", "--predictions", str(predictions)],
            fingerprint=dataset.fingerprint(),
            samplers={},
            judge=run_judge.manifest_settings() if run_judge else None,
            backend={"kind": "external", "file": str(predictions.resolve())},
            generation={},
        )
    )
    with AppendLog(rundir.predictions_path) as log:
        for prediction in matched.values():
            log.append(prediction)
    selected = [item for item in select_items(dataset, tasks, None) if item.id in matched]
    with run_progress(Console(stderr=True), show_progress) as progress:
        return await judge_and_score(
            suite=the_suite,
            rundir=rundir,
            inputs=ScoringInputs(items=selected, predictions={(k, 0): v for k, v in matched.items()}),
            judge=run_judge,
            judge_concurrency=judge.concurrency,
            model=config.model,
            fingerprint=dataset.fingerprint(),
            n_bootstrap=config.n_bootstrap,
            seed=0,
            progress=progress,
        )


__all__ = ["JudgeChoice", "JudgeSettings", "match_predictions", "rescore_run", "score_external"]
