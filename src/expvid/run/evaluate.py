"""`evaluate(config)`: the whole evaluation of one model on one suite, resumable.

Order of work: load and fingerprint the data; refuse to resume a run made with other settings;
write the manifest; generate predictions for items that have none (or whose last attempt failed);
judge what needs judging; score. Each stage appends or atomically rewrites its own file, so killing
the process at any moment loses at most the requests in flight.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from expvid.media.cache import FrameCache
from expvid.models.factory import create_backend
from expvid.run.config import EvalConfig
from expvid.run.generate import GenerationPhase
from expvid.run.manifest import check_resumable, new_manifest
from expvid.run.media_inputs import MediaPreparer
from expvid.run.progress import run_progress
from expvid.run.request_settings import apply_image_limit, check_input_mode, generation_record, sent_summary
from expvid.run.rundir import AppendLog, RunDir
from expvid.run.scoring_phase import RunScores, ScoringInputs, judge_and_score
from expvid.schema import DataError, Item, SamplerSettings
from expvid.suites.base import Dataset
from expvid.suites.protocol import EvalSuite, FrameOptions, GenerationDefaults, PromptOptions
from expvid.suites.registry import get_suite


@dataclass
class EvalResult:
    scores: RunScores
    rundir: RunDir
    generated: int
    resumed: int
    failed: int


def select_items(dataset: Dataset, tasks: Sequence[str] | None, limit: int | None) -> list[Item]:
    """Items of the chosen tasks (all when None), at most `limit` per task, in file order."""
    groups = dataset.by_task()
    if tasks is not None:
        unknown = [t for t in tasks if t not in {s.name for s in dataset.tasks} | set(groups)]
        if unknown:
            known = ", ".join(spec.name for spec in dataset.tasks)
            raise DataError(f"unknown task(s) {', '.join(unknown)}; this dataset has: {known}")
        groups = {task: groups.get(task, []) for task in tasks}
    selected: list[Item] = []
    for group in groups.values():
        selected.extend(group if limit is None else group[:limit])
    return selected


def _cache_dirs(config: EvalConfig) -> tuple[FrameCache | None, Path | None]:
    if config.cache_dir is None:
        return None, None
    responses = config.cache_dir / "responses" if config.cache_responses else None
    return FrameCache(config.cache_dir / "frames"), responses


def _backend_options(config: EvalConfig, responses: Path | None) -> dict[str, Any]:
    options = dict(config.backend_options)
    options.setdefault("log_dir", config.out / "logs")  # managed servers (vllm:) log here
    options.setdefault("concurrency", config.concurrency)
    options.setdefault("cache_dir", responses)
    options.setdefault("input_mode", config.input_mode)
    if config.frames.max_images is not None:
        options.setdefault("max_images", config.frames.max_images)
    return options


def judge_spec(suite: EvalSuite, spec: str | None, base_url: str | None) -> str | None:
    """The judge backend spec: as given; or, with only a judge URL, the paper's judge model served
    there (ExpVid: Phi-3-mini); or None for the suite's offline judge."""
    if spec is not None or base_url is None:
        return spec
    model = getattr(suite, "default_judge_model", None)
    if model is None:
        raise DataError(f"--judge-base-url needs --judge MODEL for the {suite.name} suite")
    return f"openai:{model}"


def _judge_options(config: EvalConfig, responses: Path | None) -> dict[str, Any]:
    options: dict[str, Any] = {"concurrency": config.judge_concurrency, "cache_dir": responses}
    if config.judge_base_url:
        options["base_url"] = config.judge_base_url
    if config.judge_api_key_env:
        options["api_key_env"] = config.judge_api_key_env
    return options


def _samplers(suite: EvalSuite, items: Sequence[Item], frames: FrameOptions) -> dict[str, SamplerSettings]:
    samplers: dict[str, SamplerSettings] = {}
    for item in items:
        if item.task not in samplers:
            settings = suite.sampler(item, frames)
            if settings is not None:
                samplers[item.task] = settings
    return samplers


def generation_defaults(suite: EvalSuite, prompt: PromptOptions) -> GenerationDefaults:
    """The paper's decoding settings for this prompt variant (CoT may need more tokens)."""
    chooser = getattr(suite, "generation_for", None)
    if callable(chooser):
        chosen: GenerationDefaults = chooser(prompt)
        return chosen
    return suite.generation


def validate_options(suite: EvalSuite, config: EvalConfig) -> None:
    """Let the suite reject options that do not apply to it, before any work is done."""
    check = getattr(suite, "validate_options", None)
    if callable(check):
        try:
            check(config.prompt, config.frames)
        except ValueError as error:
            raise DataError(f"{suite.name}: {error}") from None


def make_suite(config: EvalConfig) -> EvalSuite:
    try:
        return get_suite(config.suite, config.suite_options)
    except (TypeError, ValueError) as error:
        raise DataError(f"suite {config.suite!r}: {error}") from None


async def evaluate(
    config: EvalConfig,
    *,
    command: list[str] | None = None,
    console: Console | None = None,
    show_progress: bool = True,
) -> EvalResult:
    console = console or Console(stderr=True)
    suite = make_suite(config)
    validate_options(suite, config)
    dataset = suite.load(config.data, strict=config.strict)
    for problem in dataset.problems:
        console.print(f"[yellow]skipped[/] {problem}")
    items = select_items(dataset, config.tasks, config.limit)
    if not items:
        raise DataError(f"{config.data}: no items to evaluate for tasks {config.tasks or 'all'}")
    rundir = RunDir(config.out)
    fingerprint = dataset.fingerprint()
    previous = rundir.read_manifest() if rundir.exists() else None
    if previous is not None:
        check_resumable(previous, config, fingerprint)

    frame_cache, response_dir = _cache_dirs(config)
    backend = create_backend(config.model, **_backend_options(config, response_dir))
    frames, image_limit = apply_image_limit(config.frames, backend)  # e.g. Claude: 100 images a request
    check_input_mode(config.input_mode, backend, frames)
    needs_judge = any(item.answer_type.value in ("blanks", "free_text") for item in items)
    spec = judge_spec(suite, config.judge, config.judge_base_url)
    judge = suite.build_judge(spec, _judge_options(config, response_dir)) if needs_judge else None
    defaults = generation_defaults(suite, config.prompt)
    temperature = defaults.temperature if config.temperature is None else config.temperature
    max_tokens = defaults.max_tokens if config.max_tokens is None else config.max_tokens

    manifest = new_manifest(
        config,
        command=command if command is not None else sys.argv,
        fingerprint=fingerprint,
        samplers=_samplers(suite, items, frames),
        judge=judge.manifest_settings() if judge is not None else None,
        backend=backend.describe(),
        generation=generation_record(
            temperature=temperature,
            max_tokens=max_tokens,
            paper=defaults,
            input_mode=config.input_mode,
            image_limit=image_limit,
        ),
    )
    if previous is not None:
        manifest = manifest.model_copy(update={"created_at": previous.created_at})
    rundir.write_manifest(manifest)

    done = rundir.predictions()
    todo = [
        (item, sample)
        for item in items
        for sample in range(config.samples)
        if (item.id, sample) not in done or (config.retry_failed and not done[(item.id, sample)].ok)
    ]
    resumed = len(items) * config.samples - len(todo)
    with run_progress(console, show_progress) as progress:
        bar = progress.phase(f"generate ({backend.name})", len(todo))
        try:
            with AppendLog(rundir.predictions_path) as log:
                phase = GenerationPhase(
                    suite=suite,
                    backend=backend,
                    preparer=MediaPreparer(frame_cache, workers=config.decode_workers),
                    log=log,
                    frames=frames,
                    prompt=config.prompt,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=config.seed,
                    concurrency=config.concurrency,
                    thinking=config.thinking,
                    on_done=lambda p: bar.advance(failed=not p.ok, cached=p.cached),
                    input_mode=config.input_mode,
                )
                await phase.run(todo)
        finally:
            await backend.aclose()
        # What was really sent (after provider rules and 400 fallbacks), over the whole run.
        manifest.config["backend"] = backend.describe()
        manifest.config["sent"] = sent_summary(rundir.predictions().values())
        rundir.write_manifest(manifest)
        scores = await judge_and_score(
            suite=suite,
            rundir=rundir,
            inputs=ScoringInputs(items=items, predictions=rundir.predictions(), samples=config.samples),
            judge=judge,
            judge_concurrency=config.judge_concurrency,
            model=config.model,
            fingerprint=fingerprint,
            n_bootstrap=config.n_bootstrap,
            seed=config.seed or 0,
            progress=progress,
            human_judgments=config.human_judgments,
        )
    return EvalResult(
        scores=scores, rundir=rundir, generated=len(todo), resumed=resumed, failed=bar.counter.failed
    )
