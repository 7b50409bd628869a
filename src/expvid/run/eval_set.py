"""Running a whole campaign: models x suites x settings, one resumable run directory per cell.

1. Check every cell before any work: its suite, settings and frame preset, its data (fetched once
   per suite for `hf:` specs), its `EvalConfig`.
2. Decode the frames once for all models (`warm_frames`): every distinct (video, window, sampler)
   the cells will ask for is sampled into the shared frame cache, so a model never waits on a
   decoder and no video is decoded twice because two models use it; cells then read the cache.
3. Run the cells, `parallel_cells` at a time, each with its own concurrency and endpoints. A cell
   is retried as a unit (the same `evaluate`, which resumes and asks failed items again) after an
   error or while items failed, `retries` times, waiting `retry_wait_s` (doubling) in between.
   Errors in the data or settings are not retried: they need a fix.
4. Report (`eval_set_report`): the paper's table per suite and setting for every cell with scores,
   reference rows, partial cells labelled, and a static leaderboard page.

`out/eval-set.json` records each cell's state; a cell that finished with the same settings is not
run again, and killing the command at any moment and running it again continues where it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.markup import escape

from expvid.media.cache import FrameCache
from expvid.media.errors import MediaError
from expvid.media.sampler import sample_with_settings
from expvid.models.anthropic_backend import CLAUDE_IMAGE_LIMIT
from expvid.models.pricing import Price, model_ref, price_for
from expvid.models.types import BackendConfigError
from expvid.run.budget import Ledger
from expvid.run.config import EvalConfig
from expvid.run.cost import run_cost
from expvid.run.eval_set_config import (
    Cell,
    EvalSetConfig,
    cell_config,
    cell_settings,
    cells_of,
    config_digest,
)
from expvid.run.evaluate import EvalResult, evaluate, make_suite, refuse_uncountable, resolve_frames
from expvid.run.frames_control import control_sampler
from expvid.run.rundir import write_atomic
from expvid.run.selection import select_records
from expvid.schema import DataError, SamplerSettings, VideoRef
from expvid.schema.records import utc_now

STATE_FILE = "eval-set.json"
#: Errors that a retry cannot fix (bad data, bad settings, a missing package or key).
FINAL_ERRORS = (DataError, BackendConfigError, ValueError)


class CellState(BaseModel):
    #: "pending", "running", "done" (complete, every item answered), "partial" (finished with
    #: failed items or records), "stopped" (at its budget: not finished), "waiting" (requests
    #: still in a provider's batches: not finished), "failed" (an error after its retries).
    status: str = "pending"
    attempts: int = 0
    digest: str | None = None
    run_dir: str = ""
    error: str | None = None
    n_failed: int = 0
    pending: int = 0
    stopped: str | None = None
    cost_usd: float | None = None
    updated_at: str = ""


class SetState(BaseModel):
    cells: dict[str, CellState] = Field(default_factory=dict)
    frames: dict[str, int] = Field(default_factory=dict)


@dataclass
class PreparedCell:
    cell: Cell
    config: EvalConfig
    digest: str


@dataclass
class SetOutcome:
    state: SetState
    cells: list[PreparedCell]
    skipped: list[str] = field(default_factory=list)


def read_state(out: Path) -> SetState:
    path = out / STATE_FILE
    try:
        return SetState.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return SetState()


def write_state(out: Path, state: SetState) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / STATE_FILE, state.model_dump_json(indent=1) + "\n")


def prepare_cells(
    config: EvalSetConfig,
    *,
    only: list[str] | None = None,
    resolve_data: Callable[[str, str, list[str] | None, dict[str, Any]], Path] | None = None,
) -> list[PreparedCell]:
    """Every cell's `EvalConfig`, checked (its suite settings, frame preset and frames): a mistake in
    any cell fails before any cell runs."""
    roots: dict[str, Path] = {}
    prepared: list[PreparedCell] = []
    for cell in cells_of(config, only):
        suite_entry = cell.suite
        if suite_entry.name not in roots:
            if suite_entry.data.startswith("hf:"):
                if resolve_data is None:
                    raise DataError(f"{cell.id}: hf: data needs fetching (use `expvid eval-set`)")
                roots[suite_entry.name] = resolve_data(
                    suite_entry.data, suite_entry.name, suite_entry.tasks, cell_settings(cell)
                )
            else:
                roots[suite_entry.name] = Path(suite_entry.data).expanduser()
        cell_cfg = cell_config(config, cell, roots[suite_entry.name])
        try:
            resolve_frames(make_suite(cell_cfg), cell_cfg.frames)
        except DataError as error:
            raise DataError(f"{cell.id}: {error}") from None
        prepared.append(PreparedCell(cell, cell_cfg, config_digest(cell_cfg)))
    if not prepared:
        raise DataError(f"no cells to run{' for --only ' + ', '.join(only) if only else ''}")
    return prepared


def _frame_jobs(cells: list[PreparedCell]) -> list[tuple[str, float | None, float | None, SamplerSettings]]:
    """The distinct (video, window, sampler) every cell will sample: what decoding once means."""
    jobs: dict[str, tuple[str, float | None, float | None, SamplerSettings]] = {}
    loaded: dict[tuple[str, str, str], Any] = {}
    for prepared in cells:
        config = prepared.config
        suite = make_suite(config)
        frames = resolve_frames(suite, config.frames)
        ref = model_ref(config.model)
        if ref.provider == "anthropic" and not config.model.startswith("blind:"):
            cap = CLAUDE_IMAGE_LIMIT.max_images
            if frames.max_images is None or frames.max_images > cap:
                frames = frames.model_copy(update={"max_images": cap})
        if config.effective_frames_control == "none":
            continue  # a run without frames samples them for the record only; the seeing models share them
        key = (config.suite, str(config.data), json.dumps(config.suite_settings, sort_keys=True, default=str))
        if key not in loaded:
            dataset = suite.load(config.data, strict=config.strict)
            refuse_uncountable(dataset, config.tasks)
            loaded[key] = dataset
        selection = select_records(loaded[key], config.tasks, config.limit)
        for item in selection.items:
            if not isinstance(item.media, VideoRef):
                continue
            settings = control_sampler(suite.sampler(item, frames), config.effective_frames_control)
            if settings is None:
                continue
            media = item.media
            job_key = json.dumps([str(media.path), media.start, media.end, settings.model_dump(mode="json")])
            jobs.setdefault(job_key, (str(media.path), media.start, media.end, settings))
    return list(jobs.values())


def warm_frames(
    cells: list[PreparedCell], cache_dir: Path, workers: int, console: Console | None = None
) -> dict[str, int]:
    """Sample every distinct frame set once into the shared cache. Returns counts for the state
    file: distinct sets, decoded now, already cached, unreadable (their cells record the failure)."""
    jobs = _frame_jobs(cells)
    cache = FrameCache(cache_dir / "frames")
    counts = {"frame_sets": len(jobs), "decoded": 0, "cached": 0, "unreadable": 0}

    def one(job: tuple[str, float | None, float | None, SamplerSettings]) -> str:
        path, start, end, settings = job
        try:
            sampled = sample_with_settings(path, settings, start=start, end=end, cache=cache, workers=1)
        except (MediaError, OSError):
            return "unreadable"
        return "cached" if sampled.from_cache else "decoded"

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for result in pool.map(one, jobs):
            counts[result] += 1
    if console is not None and jobs:
        console.print(
            f"frames: {counts['frame_sets']} distinct frame set(s) for all cells; {counts['decoded']} decoded now, "
            f"{counts['cached']} already cached, {counts['unreadable']} unreadable ({time.monotonic() - started:.1f} s)",
            highlight=False,
        )
    return counts


#: Cell states that are not failures to retry now: the cell is as finished as it can be today.
SETTLED = ("done", "stopped", "waiting")


def _status(result: EvalResult) -> str:
    run = result.scores.run
    if result.pending:
        return "waiting"
    if result.stopped is not None:
        return "stopped"
    if run.complete and not run.n_failed:
        return "done"
    return "partial"


def shared_budget(config: EvalSetConfig) -> Ledger | None:
    """The set's own budget (`max_cost`, `max_tokens_total` at the top of the file), shared by every
    cell, with what every cell's run directory has spent so far (each at its model's price)."""
    if config.max_cost is None and config.max_tokens_total is None:
        return None
    usd, tokens = 0.0, 0
    for cell in cells_of(config):
        entry = cell.model
        prices = {}
        if entry.price is not None:
            prices[""] = Price(input_per_m=entry.price[0], output_per_m=entry.price[1], source="eval-set")
        url = entry.base_url if isinstance(entry.base_url, str) else None
        price = price_for(entry.model, prices, url)
        if (
            price is None
            and config.max_cost is not None
            and model_ref(entry.model, url).provider != "offline"
        ):
            raise DataError(
                f"the eval-set's max_cost needs a price for every model; {entry.name} has none: give it price: [IN, OUT]"
            )
        spent = run_cost(cell.run_dir(config.out) / "predictions.jsonl", price)
        usd += spent.usd or 0.0
        tokens += spent.total_tokens
    ledger = Ledger(max_cost=config.max_cost, max_tokens=config.max_tokens_total, scope="eval-set")
    ledger.spent_usd, ledger.spent_tokens = usd, tokens
    return ledger


async def run_cell(
    prepared: PreparedCell,
    state: CellState,
    *,
    retries: int,
    retry_wait_s: float,
    console: Console,
    save: Callable[[], None],
    show_progress: bool,
    budget: Ledger | None = None,
) -> CellState:
    """One cell, retried as a unit: a fresh `evaluate` of the same run directory each attempt."""
    cell, config = prepared.cell, prepared.config
    wait = retry_wait_s
    for attempt in range(retries + 1):
        state.status, state.attempts, state.digest = "running", state.attempts + 1, prepared.digest
        state.run_dir, state.updated_at = str(config.out), utc_now().isoformat()
        save()
        try:
            result = await evaluate(
                config,
                command=["expvid", "eval-set", cell.id],
                console=console,
                show_progress=show_progress,
                shared_budget=budget,
            )
        except FINAL_ERRORS as error:
            state.status, state.error = "failed", f"{type(error).__name__}: {error}"
            break
        except Exception as error:  # a server down, a network outage: worth another try later
            state.status, state.error = "failed", f"{type(error).__name__}: {error}"
        else:
            state.status, state.error = _status(result), None
            state.n_failed = result.scores.run.n_failed
            state.pending, state.stopped = result.pending, result.stopped
            cost = result.scores.run.cost
            state.cost_usd = None if cost is None else cost.usd
            if state.status in SETTLED:
                break  # a budget stop or batches still running are not failures to retry now
        state.updated_at = utc_now().isoformat()
        save()
        if attempt < retries:
            console.print(
                f"[yellow]{escape(cell.id)}[/]: attempt {state.attempts} ended {state.status}"
                + (f" ({escape(state.error)})" if state.error else f" ({state.n_failed} failed item(s))")
                + f"; retrying the cell in {wait:g} s"
            )
            await asyncio.sleep(wait)
            wait *= 2
    state.updated_at = utc_now().isoformat()
    save()
    return state


async def run_eval_set(
    config: EvalSetConfig,
    cells: list[PreparedCell],
    *,
    console: Console,
    show_progress: bool = True,
) -> SetOutcome:
    out = config.out
    state = read_state(out)
    outcome = SetOutcome(state=state, cells=cells)
    to_run: list[PreparedCell] = []
    for prepared in cells:
        previous = state.cells.get(prepared.cell.id)
        if previous is not None and previous.status == "done" and previous.digest == prepared.digest:
            outcome.skipped.append(prepared.cell.id)
            continue
        state.cells[prepared.cell.id] = previous or CellState(run_dir=str(prepared.config.out))
        to_run.append(prepared)
    if outcome.skipped:
        console.print(
            f"{len(outcome.skipped)} cell(s) already finished with these settings; not run again",
            highlight=False,
        )

    def save() -> None:
        write_state(out, state)

    save()
    if to_run and config.cache_dir is not None:
        state.frames = await asyncio.to_thread(
            warm_frames, to_run, config.cache_dir, config.decode_workers, console
        )
        save()
    slots = asyncio.Semaphore(config.parallel_cells)
    budget = shared_budget(config)

    async def one(prepared: PreparedCell) -> None:
        async with slots:
            console.print(f"[cyan]cell[/] {escape(prepared.cell.id)} -> {escape(str(prepared.config.out))}")
            await run_cell(
                prepared,
                state.cells[prepared.cell.id],
                retries=config.retries,
                retry_wait_s=config.retry_wait_s,
                console=console,
                save=save,
                show_progress=show_progress and config.parallel_cells == 1,
                budget=budget,
            )

    tasks = [asyncio.create_task(one(prepared)) for prepared in to_run]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            for cell_state in state.cells.values():
                if cell_state.status == "running":
                    cell_state.status = "pending"  # interrupted: the next run continues it
            save()
    return outcome
