"""Requests are built ahead of the concurrency gate, a bounded number of them, and building never
holds up sending: what `benchmarks/cli_run.py` measures, checked here for its invariants, not its speed."""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path

import pytest

from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.media.cache import FrameCache
from expvid.models.factory import create_backend
from expvid.models.types import GenerateRequest, GenerateResponse
from expvid.run.bounds import Bound
from expvid.run.budget import BudgetGate, Ledger
from expvid.run.error_streak import RunStopped
from expvid.run.generate import MAX_LOOKAHEAD, GenerationPhase
from expvid.run.media_inputs import MediaPreparer, PreparedMedia
from expvid.run.rundir import AppendLog
from expvid.schema import Item, Prediction, SamplerSettings, Usage
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import get_suite

CONCURRENCY = 3


class CountingPreparer(MediaPreparer):
    """The runner's own preparer, noting each request built (frames ready) in a shared timeline."""

    def __init__(self, cache: FrameCache, timeline: list[str]) -> None:
        super().__init__(cache)
        self.timeline = timeline

    async def prepare(self, item: Item, settings: SamplerSettings | None) -> PreparedMedia:
        media = await super().prepare(item, settings)
        self.timeline.append("built")
        return media


class SpyBounds:
    """A run's pricing as the phase sees it (`Bounder`), noting what it was asked."""

    def __init__(self) -> None:
        self.observed = 0

    def bound(self, request: GenerateRequest) -> Bound:
        return Bound(None, 1)

    def observe(self, request: GenerateRequest, usage: Usage | None) -> None:
        self.observed += 1


def _phase(
    sample_dir: Path,
    server: LoopbackServer,
    log: AppendLog,
    cache: FrameCache,
    timeline: list[str],
    concurrency: int = CONCURRENCY,
    **extra: object,
) -> tuple[GenerationPhase, list[Item]]:
    suite = get_suite("expvid")
    items = [item for item in suite.load(sample_dir, tasks=["tools"]).items if item.task == "tools"][:9]
    backend = create_backend(
        f"openai:loopback@{server.openai_base_url}", concurrency=concurrency, max_retries=0, cache_dir=None
    )
    phase = GenerationPhase(
        suite=suite,
        backend=backend,
        preparer=CountingPreparer(cache, timeline),
        log=log,
        frames=FrameOptions(),
        temperature=0.0,
        max_tokens=64,
        seed=0,
        concurrency=concurrency,
        on_done=lambda prediction: timeline.append("answered"),
        **extra,  # type: ignore[arg-type]
    )
    return phase, items


def _warm(phase: GenerationPhase, items: list[Item]) -> None:
    """Decode every item's frames once, so building a request is a frame-cache hit."""

    async def warm() -> None:
        for item in items:
            await MediaPreparer(phase.preparer.cache).prepare(item, phase.suite.sampler(item, phase.frames))

    asyncio.run(warm())


def test_requests_are_built_ahead_of_the_gate_and_no_further(sample_dir, tmp_path, frame_cache_dir):
    """While the first answers are awaited, the next `lookahead` requests are built (so answers that
    arrive together are refilled at once), and never more: memory stays bounded."""
    timeline: list[str] = []
    cache = FrameCache(frame_cache_dir / "frames")
    with LoopbackServer(Reply.slow("\\boxed{A}", 0.5)) as server, AppendLog(tmp_path / "p.jsonl") as log:
        phase, items = _phase(sample_dir, server, log, cache, timeline)
        _warm(phase, items)
        asyncio.run(phase.run(items))
        assert server.max_in_flight == CONCURRENCY
    assert phase.lookahead == CONCURRENCY
    built_before_first_answer = timeline[: timeline.index("answered")].count("built")
    assert built_before_first_answer == CONCURRENCY + phase.lookahead
    open_items = [
        timeline[: i + 1].count("built") - timeline[: i + 1].count("answered") for i in range(len(timeline))
    ]
    assert max(open_items) == CONCURRENCY + phase.lookahead
    assert timeline.count("answered") == len(items) == len((tmp_path / "p.jsonl").read_text().splitlines())
    with AppendLog(tmp_path / "wide.jsonl") as log:  # a wide run does not hold as many more built
        wide, _ = _phase(sample_dir, server, log, cache, [], 8 * MAX_LOOKAHEAD)
    assert wide.lookahead == MAX_LOOKAHEAD


def test_without_a_budget_answers_teach_the_bounds_nothing(sample_dir, tmp_path, frame_cache_dir):
    """An answer's usage only bounds later requests of a budgeted run: without a budget the images
    of every answered request are not decoded to learn from it."""
    cache = FrameCache(frame_cache_dir / "frames")
    with LoopbackServer(Reply.ok("\\boxed{A}")) as server, AppendLog(tmp_path / "p.jsonl") as log:
        spy = SpyBounds()
        phase, items = _phase(sample_dir, server, log, cache, [], bounds=spy)
        asyncio.run(phase.run(items[:4]))
        assert spy.observed == 0 and len(server.requests) == 4


def test_a_stopped_run_gives_back_the_budget_of_requests_it_built_but_never_sent(
    sample_dir, tmp_path, frame_cache_dir
):
    """Built requests hold their bound while they wait; when the error streak stops the run, those
    never sent give it back, so a budget shared with later runs (an eval-set's) is not kept from them."""
    ledger = Ledger(max_cost=None, max_tokens=10**9, scope="eval-set")
    cache = FrameCache(frame_cache_dir / "frames")
    with (
        LoopbackServer(Reply.error(404, "The model `nope` does not exist")) as server,
        AppendLog(tmp_path / "p.jsonl") as log,
    ):
        phase, items = _phase(
            sample_dir,
            server,
            log,
            cache,
            [],
            1,
            budget=BudgetGate(ledgers=[ledger], price=None),
            bounds=SpyBounds(),
            stop_after_errors=3,
        )
        _warm(phase, items)
        with pytest.raises(RunStopped):
            asyncio.run(phase.run(items))
        assert len(server.requests) == 3
    assert phase.lookahead == 1 and ledger.in_flight == 0 and ledger.reserved_tokens == 0


def test_a_log_that_cannot_be_written_fails_the_run_without_hanging(sample_dir, tmp_path, frame_cache_dir):
    """Every sender's write fails (a full disk): the run still ends, with the disk's error."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    cache = FrameCache(frame_cache_dir / "frames")
    with LoopbackServer(Reply.ok("\\boxed{A}")) as server, AppendLog(Path("/dev/full")) as log:
        phase, items = _phase(sample_dir, server, log, cache, [])
        with pytest.raises(OSError) as raised:
            asyncio.run(asyncio.wait_for(phase.run(items), timeout=60))
    assert raised.value.errno == errno.ENOSPC


class PacedModel:
    """A model answering each request after 20 ms, noting sends and concurrency in the timeline (the
    scheduling under test is the runner's; a loopback server would add its own thread's timing)."""

    name = "paced"

    def __init__(self, timeline: list[str]) -> None:
        self.timeline = timeline
        self.in_flight = self.max_in_flight = 0

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.timeline.append("sent")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await asyncio.sleep(0.02)
        self.in_flight -= 1
        return GenerateResponse(text="\\boxed{A}")

    def describe(self) -> dict[str, object]:
        return {"name": self.name}

    async def aclose(self) -> None:
        return None


def test_an_answer_is_replaced_by_a_waiting_request_before_anything_else_runs(
    sample_dir, tmp_path, frame_cache_dir
):
    """Answers that arrive together do not wait for each other's next request: whenever a built
    request is waiting, the answer's sender sends it in the same step that records the answer."""
    timeline: list[str] = []
    cache = FrameCache(frame_cache_dir / "frames")
    with LoopbackServer(Reply.ok("unused")) as server, AppendLog(tmp_path / "p.jsonl") as log:
        phase, items = _phase(sample_dir, server, log, cache, timeline)
        phase.backend = model = PacedModel(timeline)
        _warm(phase, items)
        asyncio.run(phase.run(items))
    assert model.max_in_flight == CONCURRENCY and timeline.count("answered") == len(items)
    refills = 0
    for i, event in enumerate(timeline):
        waiting = timeline[:i].count("built") - timeline[:i].count("sent")
        if event == "answered" and waiting > 0:
            assert timeline[i + 1] == "sent", timeline
            refills += 1
    assert refills >= phase.lookahead  # the requests built while the first answers were awaited


def test_a_prediction_records_the_same_with_requests_built_ahead(sample_dir, tmp_path, frame_cache_dir):
    """What a prediction records (prompt, its hash, frames, what was sent) does not depend on when
    its request was built."""
    cache = FrameCache(frame_cache_dir / "frames")
    records: list[list[Prediction]] = []
    for concurrency in (1, CONCURRENCY):
        with (
            LoopbackServer(Reply.ok("\\boxed{A}")) as server,
            AppendLog(tmp_path / f"{concurrency}.jsonl") as log,
        ):
            phase, items = _phase(sample_dir, server, log, cache, [], concurrency)
            asyncio.run(phase.run(items[:5]))
        lines = (tmp_path / f"{concurrency}.jsonl").read_text().splitlines()
        records.append(
            sorted((Prediction.model_validate_json(line) for line in lines), key=lambda p: p.item_id)
        )
    keep = {"item_id", "frames", "n_images", "sent", "request_hash", "response"}
    first, second = (
        [p.model_dump(include=keep) | {"meta": p.meta["prompt_sha256"]} for p in r] for r in records
    )
    assert first == second and len(first) == 5
