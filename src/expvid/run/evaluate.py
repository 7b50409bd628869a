"""`evaluate(config)`: the whole evaluation of one model on one suite, resumable.

Order of work: load and fingerprint the data (refusing files whose records cannot be counted);
refuse to resume a run made with other settings, saying what differs; write the manifest; generate
predictions for items that have none (or whose last attempt failed); judge what needs judging;
score. Each stage appends or atomically rewrites its own file, so killing the process at any
moment loses at most the requests in flight.

Every record of the chosen tasks is in the denominator: an item whose video is missing or
unreadable is a media failure (scored 0, counted), an invalid record is scored 0 and counted.
`EvalResult.n_problems` says how many records scored 0 for such reasons, so the CLI can exit
with its own status after writing everything.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from expvid.media.cache import FrameCache
from expvid.models.factory import create_backend
from expvid.run.budget import Ledger
from expvid.run.config import EvalConfig
from expvid.run.cost import run_extras
from expvid.run.error_streak import RunStopped
from expvid.run.frames_control import control_sampler
from expvid.run.generate import GenerationPhase
from expvid.run.identity import identity_defaults, resolved_identity, stored_identity
from expvid.run.judge_choice import JudgeChoice, judge_spec
from expvid.run.manifest import DatasetState, check_resumable, new_manifest
from expvid.run.media_inputs import MediaPreparer
from expvid.run.progress import run_progress
from expvid.run.request_settings import (
    apply_image_limit,
    check_input_mode,
    generation_record,
    sent_summary,
    temperature_as_sent,
)
from expvid.run.run_lock import RunLock, check_out_folder
from expvid.run.rundir import AppendLog, RunDir
from expvid.run.scoring_phase import DatasetPrint, RunScores, ScoringInputs, judge_and_score
from expvid.run.selection import Selection, select_items, select_records, suite_task_names
from expvid.run.spending import RunPricing, batch_adapter_for, record_spending
from expvid.run.terminal import message_console
from expvid.schema import DataError, Item, SamplerSettings
from expvid.schema.dataset import Dataset
from expvid.suites.protocol import EvalSuite, FrameOptions, GenerationDefaults
from expvid.suites.registry import get_suite

if TYPE_CHECKING:  # the batch machinery is imported only by runs that use --batch (start-up time)
    from expvid.run.batch_state import BatchOutcome

__all__ = ["EvalResult", "evaluate", "judge_spec", "make_suite", "make_suite_named", "select_items"]


@dataclass
class EvalResult:
    scores: RunScores
    rundir: RunDir
    generated: int
    resumed: int
    failed: int
    #: Requests not sent because the run reached its budget (`--max-cost`, `--max-tokens-total`).
    not_sent: int = 0
    #: Why generation stopped early (the budget), or None.
    stopped: str | None = None
    #: Requests still waiting in provider batches (`--batch` without waiting).
    pending: int = 0

    @property
    def n_problems(self) -> int:
        """Records scored 0 for a reason other than the model's answer (failed, invalid, judge failed)."""
        return self.scores.run.n_problems


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


def _samplers(
    suite: EvalSuite, items: Sequence[Item], frames: FrameOptions, control: str = "full"
) -> dict[str, SamplerSettings]:
    samplers: dict[str, SamplerSettings] = {}
    for item in items:
        if item.task not in samplers:
            settings = control_sampler(suite.sampler(item, frames), control)
            if settings is not None:
                samplers[item.task] = settings
    return samplers


def generation_defaults(suite: EvalSuite) -> GenerationDefaults:
    """The paper's decoding settings under the suite's settings (CoT may need more tokens)."""
    hook = getattr(suite, "generation_defaults", None)
    if callable(hook):
        chosen: GenerationDefaults = hook()
        return chosen
    return suite.generation


def resolve_frames(suite: EvalSuite, frames: FrameOptions) -> FrameOptions:
    """The suite's paper frame setting under the user's options; options that do not apply refused."""
    hook = getattr(suite, "resolve_frames", None)
    if not callable(hook):
        return frames
    try:
        resolved: FrameOptions = hook(frames)
    except ValueError as error:
        raise DataError(f"{suite.name}: {error}") from None
    return resolved


def make_suite(config: EvalConfig) -> EvalSuite:
    return make_suite_named(config.suite, config.suite_settings)


def make_suite_named(name: str, settings: Any = None) -> EvalSuite:
    """The suite with its settings validated; a `DataError` (one line, naming the key) for anything wrong."""
    try:
        return get_suite(name, settings)
    except (TypeError, ValueError) as error:
        raise DataError(str(error)) from None


def suite_settings_record(suite: EvalSuite) -> dict[str, Any]:
    """Every suite setting, resolved (defaults filled in): what the manifest records."""
    settings = getattr(suite, "settings", None)
    recorded = getattr(settings, "recorded", None)
    return recorded() if callable(recorded) else {}


def refuse_uncountable(dataset: Dataset, tasks: Sequence[str] | None = None) -> None:
    """A file that cannot be read to its end hides how many records it has: nothing to score.

    A file of one task only (ExpVid) matters only when that task is chosen."""
    relevant = [
        problem
        for problem in dataset.unreadable
        if tasks is None or dataset.unreadable_tasks.get(problem) in (None, *tasks)
    ]
    if relevant:
        listing = "\n  ".join(str(problem) for problem in relevant)
        leave_out = (
            " (or leave their tasks out with --tasks)"
            if any(dataset.unreadable_tasks.get(p) for p in relevant)
            else ""
        )
        raise DataError(
            f"cannot count the records of {len(relevant)} file(s); fix them{leave_out} before evaluating:\n  {listing}"
        )


def announce_data_problems(console: Console, dataset: Dataset, selection: Selection) -> None:
    """Say, before any work, what will be scored 0 and why (one line per record, a summary for media)."""
    for record in selection.invalid:
        where = f"task {record.task}" if record.task else "task unknown, in no task's score"
        console.print(
            f"[yellow]invalid record[/] ({where}; counted, scored 0): {escape(str(record.problem))}"
        )
    missing = {media.key: media for media in dataset.missing_media()}
    needed = {key for item in selection.items for key in dataset.media_keys(item) if key in missing}
    if needed:
        shown = escape(", ".join(str(missing[key].path) for key in sorted(needed)[:3]))
        console.print(
            f"[yellow]{len(needed)} media file(s) missing[/] (e.g. {shown}); their items are recorded as media "
            f"failures and scored 0 (`expvid data check {escape(str(dataset.root))}` lists them all)"
        )


def load_for_run(suite: EvalSuite, config: EvalConfig) -> Dataset:
    """The dataset a run needs: only the chosen tasks' records where the suite keeps tasks in files
    of their own (`loads_chosen_tasks`; its fingerprint still covers every file), else everything."""
    tasks = config.tasks if getattr(suite, "loads_chosen_tasks", False) else None
    return suite.load(config.data, tasks=tasks, strict=config.strict)


def _asr_notes(config: EvalConfig, suite: EvalSuite, items: Sequence[Item]) -> list[str]:
    """`-S with_asr=true` on a benchmark built by `expvid build`: how much a word-overlap solver gets from the
    narration alone (`expvid.suites.expvid_asr`), for the console and the report."""
    if suite.name != "expvid" or not getattr(getattr(suite, "settings", None), "with_asr", False):
        return []
    from expvid.suites.expvid_asr import asr_shortcut_note

    note = asr_shortcut_note(config.data, items)
    return [note] if note else []


def dataset_state(dataset: Dataset) -> DatasetState:
    return DatasetState(dataset.suite, dict(dataset.file_hashes), dataset.media_sizes())


async def evaluate(
    config: EvalConfig,
    *,
    command: list[str] | None = None,
    console: Console | None = None,
    show_progress: bool = True,
    shared_budget: Ledger | None = None,
) -> EvalResult:
    """Run `config` in its run directory, which this process holds (`run_lock`) while it runs.
    `shared_budget`: a budget shared with other runs (an eval-set's `max_cost`)."""
    console = console or message_console(stderr=True)
    check_out_folder(config.out)
    command = command if command is not None else sys.argv
    lock = RunLock(config.out, " ".join(command)).acquire()
    try:
        if lock.took_over is not None:
            console.print(
                f"[yellow]note[/]: took over the lock of {escape(str(config.out))} left by "
                f"{escape(lock.took_over.describe())}, which is no longer running"
            )
        return await _evaluate(
            config, command=command, console=console, show_progress=show_progress, shared_budget=shared_budget
        )
    finally:
        lock.release()


async def _evaluate(
    config: EvalConfig,
    *,
    command: list[str],
    console: Console,
    show_progress: bool,
    shared_budget: Ledger | None,
) -> EvalResult:
    suite = make_suite(config)
    # The suite's paper frames and resolution, where none were given, before the identity is taken.
    config = config.model_copy(update={"frames": resolve_frames(suite, config.frames)})
    dataset = load_for_run(suite, config)
    refuse_uncountable(dataset, config.tasks)
    selection = select_records(dataset, config.tasks, config.limit, suite_task_names(suite))
    items = selection.items
    if not items and not selection.invalid:
        raise DataError(f"{config.data}: no items to evaluate for tasks {config.tasks or 'all'}")
    announce_data_problems(console, dataset, selection)
    asr_notes = _asr_notes(config, suite, items)
    for note in asr_notes:
        console.print(f"[yellow]note[/]: {escape(note)}")
    rundir = RunDir(config.out)
    state = dataset_state(dataset)
    frame_cache, response_dir = _cache_dirs(config)
    backend_options = _backend_options(config, response_dir)
    defaults = generation_defaults(suite)
    temperature = defaults.temperature if config.temperature is None else config.temperature
    max_tokens = defaults.max_tokens if config.max_tokens is None else config.max_tokens
    identity = resolved_identity(
        config,
        suite=suite,
        dataset=dataset,
        temperature=temperature,
        max_tokens=max_tokens,
        backend_options=backend_options,
    )
    previous = rundir.read_manifest() if rundir.exists() else None
    if previous is not None:
        before = stored_identity(previous, dataset=dataset, resolve=_generation)
        resumption = check_resumable(
            previous,
            config.out,
            before=before,
            now=identity,
            dataset=state,
            answered=_answered_media(dataset, rundir),
            defaults=identity_defaults(config),
        )
        state = DatasetState(state.suite, state.file_hashes, resumption.media)
        for note in resumption.notes:
            console.print(f"[yellow]note[/]: {escape(note)}")

    pricing = RunPricing.of(config, backend_options)
    budget = pricing.gate(config, rundir, shared_budget)  # refuses --max-cost without a price before any work
    backend = create_backend(config.model, **backend_options)
    adapter = batch_adapter_for(backend) if config.batch is not None else None
    frames, image_limit = apply_image_limit(config.frames, backend)  # e.g. Claude: 100 images a request
    check_input_mode(config.input_mode, backend, frames)
    judge = JudgeChoice.of(config).build(suite, items, response_dir)

    manifest = new_manifest(
        config,
        command=command,
        dataset=state,
        samplers=_samplers(suite, items, frames, config.effective_frames_control),
        judge=judge.manifest_settings() if judge is not None else None,
        backend=backend.describe(),
        generation=generation_record(
            temperature=temperature,
            max_tokens=max_tokens,
            paper=defaults,
            input_mode=config.input_mode,
            frames_control=config.effective_frames_control,
            image_limit=image_limit,
            temperature_sent=identity.get("temperature") is not None,
        ),
        identity=identity,
        suite_settings=suite_settings_record(suite),
    )
    if previous is not None:
        manifest = manifest.model_copy(update={"created_at": previous.created_at})
    manifest.config["price"] = None if pricing.price is None else pricing.price.model_dump(mode="json")
    manifest.config["budget"] = {"max_cost": config.max_cost, "max_tokens_total": config.max_tokens_total}
    rundir.write_manifest(manifest)

    done = rundir.predictions()
    todo = [
        (item, sample)
        for item in items
        for sample in range(config.samples)
        if (item.id, sample) not in done or (config.retry_failed and not done[(item.id, sample)].ok)
    ]
    resumed = len(items) * config.samples - len(todo)
    stopped: RunStopped | None = None
    outcome: BatchOutcome | None = None
    with run_progress(console, show_progress) as progress:
        bar = progress.phase(f"{'batch' if adapter else 'generate'} ({backend.name})", len(todo))
        try:
            with AppendLog(rundir.predictions_path) as log:
                phase = GenerationPhase(
                    suite=suite,
                    backend=backend,
                    preparer=MediaPreparer(frame_cache, workers=config.decode_workers),
                    log=log,
                    frames=frames,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=config.seed,
                    concurrency=config.concurrency,
                    thinking=config.thinking,
                    on_done=lambda p: bar.advance(failed=not p.ok, cached=p.cached),
                    input_mode=config.input_mode,
                    budget=budget,
                    bounds=pricing,
                    stop_after_errors=config.stop_after_errors,
                    frames_control=config.effective_frames_control,
                )
                if adapter is not None and config.batch is not None:
                    from expvid.run.batch_phase import BatchPhase, run_uid

                    outcome = await BatchPhase(
                        generation=phase,
                        adapter=adapter,
                        rundir=rundir,
                        log=log,
                        settings=config.batch,
                        run_uid=run_uid(str(config.out.resolve()), manifest.created_at.isoformat()),
                        items=items,
                        budget=budget,
                        bounds=pricing,
                        console=console,
                        on_done=lambda p: bar.advance(failed=not p.ok, cached=p.cached),
                    ).run(todo)
                else:
                    try:
                        await phase.run(todo)
                    except RunStopped as streak:
                        stopped = streak
        finally:
            await backend.aclose()
        # What was really sent (after provider rules and 400 fallbacks), over the whole run.
        manifest.config["backend"] = backend.describe()
        predictions = rundir.predictions()  # read once: the summary below and the scores
        manifest.config["sent"] = sent_summary(predictions.values())
        generation = manifest.config.get("generation")
        if isinstance(generation, dict):  # what went out, after any server's 400s
            generation["temperature"] = temperature_as_sent(
                manifest.config["sent"], generation.get("temperature")
            )
        not_sent = outcome.not_sent if outcome is not None else phase.not_sent
        stop = record_spending(manifest.config, budget, outcome, not_sent, console)
        rundir.write_manifest(manifest)
        if stopped is not None:  # nothing to score yet: the rest of the items were never asked
            raise stopped
        fingerprint = DatasetPrint(state.fingerprint, state.annotations, covers_media=True)
        scores = await judge_and_score(
            suite,
            rundir,
            ScoringInputs(
                selection, predictions, config.model, fingerprint, samples=config.samples, notes=asr_notes
            ),
            judge=judge,
            judge_concurrency=config.judge_concurrency,
            config=config,
            progress=progress,
            extras=run_extras(rundir.root, manifest.config),
        )
    return EvalResult(
        scores=scores,
        rundir=rundir,
        generated=len(todo) - not_sent - (outcome.pending if outcome is not None else 0),
        resumed=resumed,
        failed=bar.counter.failed,
        not_sent=not_sent,
        stopped=None if stop is None else stop.describe(),
        pending=outcome.pending if outcome is not None else 0,
    )


def _answered_media(dataset: Dataset, rundir: RunDir) -> set[str]:
    """Media files (keys) that answers already recorded in the run directory were made from."""
    answered = {item_id for (item_id, _), prediction in rundir.predictions().items() if prediction.ok}
    return {key for item in dataset.items if item.id in answered for key in dataset.media_keys(item)}


def _generation(suite: EvalSuite, config: EvalConfig) -> tuple[float, int]:
    defaults = generation_defaults(suite)
    temperature = defaults.temperature if config.temperature is None else config.temperature
    max_tokens = defaults.max_tokens if config.max_tokens is None else config.max_tokens
    return temperature, max_tokens
