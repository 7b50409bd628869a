"""The generation phase: for each (item, sample), sample frames, ask the model, append the prediction.

Items run concurrently: a bounded number are "open" at once (frames being decoded, a request built
and waiting to be sent, or in flight), decoding happens in worker threads, and the backend's own
adaptive limiter decides how many requests are really in flight. Every outcome, success or failure,
is appended to `predictions.jsonl` the moment it is known, so an interrupted run loses only what was
in flight.

Requests are built ahead of the gate and sent the moment a slot frees. Builders (one task per
pair, at most `concurrency + lookahead` pairs open) sample frames, build the request and hold its
budget; `concurrency` senders each send one built request at a time. A sender records an answer
and sends the next built request in the same step of the event loop, so an answer's slot (and its
kept-alive connection) is refilled before the answers that arrived with it are read, and building
(a frame-cache read, the prompt, the request: half a millisecond of the event loop) happens
between answers, never between an answer and the request that replaces it. Measured by
benchmarks/cli_run.py: 1,000 Level-1-shaped requests (8 frames of 320x240) against a 200 ms server.

Seeds are per item: the request for (item, sample) carries `item_seed(seed, item id, sample)`, so
an answer never depends on which other items ran beside it (a batching backend samples each row
with its own generator) nor on the order or concurrency of the run. With n samples per item
(pass@k) the frames are the same for every sample; sample 0 is exactly the single-sample request,
so it can come from the response cache.

Each prediction records what was sent (`Prediction.sent`): the backend's own record (temperature
or none, token-limit field, reasoning effort, what a provider refused) plus the input mode and the
frame size, and a provider's refusal as an answer (`Prediction.refusal`, an empty response).

With a budget (`--max-cost`, `--max-tokens-total`) each request that is not in the response cache
asks `budget.BudgetGate` for room for its upper bound (`bounds`) first, and gives back what it did
not use when its answer comes; once there is no room, nothing more is sent and the items not asked
get no line, so a resume with a larger budget asks them. `prepare` / `answered` / `failed`
are the same steps a batch run (`batch_phase`) uses, so a batched answer is recorded exactly as an
online one.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from expvid.media.errors import MediaError
from expvid.models.hf import FRAME_TIMES_KEY
from expvid.models.types import (
    BackendError,
    GenerateRequest,
    GenerateResponse,
    InputMode,
    ModelBackend,
    ThinkingConfig,
)
from expvid.run.bounds import Bound, Bounder
from expvid.run.budget import BudgetExhausted, BudgetGate
from expvid.run.error_streak import DEFAULT_STOP_AFTER, ErrorStreak, RunStopped
from expvid.run.frames_control import arrange_media, control_sampler
from expvid.run.media_inputs import MediaPreparer
from expvid.run.rundir import AppendLog
from expvid.schema import ErrorKind, FrameRef, Item, Prediction, SamplerSettings
from expvid.suites.protocol import EvalSuite, FrameOptions

#: The most requests built ahead of the senders. Each holds its frames (a Level-3 request of 128
#: frames at 224x224: about 2 MB), so a run at `--concurrency 256` does not hold 256 more; a burst
#: larger than this waits for builds of half a millisecond each.
MAX_LOOKAHEAD = 32

#: How per-item seeds are derived (recorded in the manifest).
SEED_SCHEME = "sha256(seed, item id, sample) -> 31-bit integer"


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_seed(seed: int | None, item_id: str, sample: int) -> int | None:
    """The seed of one (item, sample): fixed by the run's seed and the item alone.

    31 bits, so every API takes it (Gemini's seed is an int32).
    """
    if seed is None:
        return None
    digest = hashlib.sha256(f"{seed}\x00{item_id}\x00{sample}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def frames_sent(settings: SamplerSettings | None) -> dict[str, object]:
    """The frame side of `Prediction.sent`: how the pictures were sized and how many went out."""
    if settings is None:
        return {}
    return {"size": settings.size, "max_side": settings.max_side, "image_format": settings.image_format}


#: What a draft's predictions all say, answered or failed: whose, and what was shown.
_SHARED_BY_PREDICTIONS = ("item_id", "task", "model", "sample", "frames", "n_images")
#: What a prediction keeps of the response as the backend returned it, under the same names.
_KEPT_AS_ANSWERED = ("reasoning", "refusal", "finish_reason", "usage", "cached", "request_hash")


class PredictionDraft(BaseModel):
    """Everything a prediction records besides the answer: which item, what was shown, the prompt.

    One shape for online and batched answers (a batch run stores drafts in its run directory and
    completes them when the provider's results arrive, possibly in another process)."""

    item_id: str
    task: str
    model: str
    sample: int = 0
    frames: list[FrameRef] = Field(default_factory=list)
    n_images: int = 0
    mode: str = "images"
    frame_record: dict[str, Any] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)
    frames_from_cache: bool = False

    def _base(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _SHARED_BY_PREDICTIONS}

    def answer(self, response: GenerateResponse, *, batch: dict[str, Any] | None = None) -> Prediction:
        """The prediction of an answer. The raw text is kept as the model wrote it (any <think> block
        included); extraction strips reasoning before reading the answer. A separate reasoning
        channel (a reasoning summary) is kept beside it, never in the answer. `batch` ({"provider",
        "id"}) marks an answer that came through a provider's batch API (priced at its discount)."""
        sent = {"input_mode": self.mode, **response.sent, **self.frame_record}
        meta = self.meta | {
            "finish_reason": response.finish_reason,
            "frames_from_cache": self.frames_from_cache,
        }
        if batch is not None:
            sent["batch"] = batch
            meta["batch_id"] = batch.get("id")
        return Prediction(
            **self._base(),
            **{name: getattr(response, name) for name in _KEPT_AS_ANSWERED},
            response=response.text,
            sent=sent,
            latency_s=response.latency_s if batch is None else None,
            # finish_reason also stays in meta, where run directories made before the field keep it.
            meta=meta,
        )

    def failure(
        self,
        message: str,
        kind: ErrorKind,
        *,
        sent: dict[str, Any] | None = None,
        status: int | None = None,
        latency_s: float | None = None,
        extra_meta: dict[str, Any] | None = None,
    ) -> Prediction:
        """The prediction of a request that failed for good (with what its last attempt sent)."""
        return Prediction(
            **self._base(),
            error=message,
            error_kind=kind,
            latency_s=latency_s,
            sent={"input_mode": self.mode, **sent, **self.frame_record} if sent else {},
            meta=self.meta | {"status": status} | (extra_meta or {}),
        )


@dataclass
class PreparedItem:
    """One (item, sample) ready to send: the request and the draft of its prediction."""

    item: Item
    sample: int
    request: GenerateRequest
    draft: PredictionDraft
    #: The budget held for this request (its bound), settled or given back when it is answered.
    reserved: Bound | None = None


class GenerationPhase:
    def __init__(
        self,
        *,
        suite: EvalSuite,
        backend: ModelBackend,
        preparer: MediaPreparer,
        log: AppendLog,
        frames: FrameOptions,
        temperature: float,
        max_tokens: int,
        seed: int | None,
        concurrency: int,
        thinking: ThinkingConfig | None = None,
        on_done: Callable[[Prediction], None] | None = None,
        input_mode: InputMode = "images",
        budget: BudgetGate | None = None,
        bounds: Bounder | None = None,
        stop_after_errors: int | None = DEFAULT_STOP_AFTER,
        frames_control: str = "full",
    ) -> None:
        self.suite = suite
        self.backend = backend
        self.preparer = preparer
        self.log = log
        self.frames = frames
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.thinking = thinking
        self.input_mode: InputMode = input_mode
        #: The run's control condition ("full", "none", "single", "shuffled"; `run.frames_control`).
        self.frames_control = frames_control
        #: Requests built and waiting for a sender, beside the `concurrency` in flight: answers that
        #: arrive together find their replacements built.
        self.lookahead = min(concurrency, MAX_LOOKAHEAD)
        self.concurrency = concurrency
        self._open = asyncio.Semaphore(concurrency + self.lookahead)
        #: Exceptions that escaped a sender (a bug, a failing disk), raised when the run ends.
        self._errors: list[Exception] = []
        self.on_done = on_done
        self.streak = ErrorStreak(stop_after_errors)
        #: Why the run stopped early (see `error_streak`), or None.
        self.stopped: str | None = None
        self._tasks: list[asyncio.Task[None]] = []
        #: `--max-cost` / `--max-tokens-total`: asked before each request that is not in the cache.
        self.budget = budget
        self.bounds = bounds
        #: (item, sample) pairs not asked because the budget was reached (left for a resume).
        self.not_sent = 0

    async def run(self, work: Sequence[Item | tuple[Item, int]]) -> None:
        """Run items (sample 0) or (item, sample) pairs; `RunStopped` when a run of identical
        non-transient errors shows the rest would fail too (everything finished is recorded).
        Builders feed built requests to `concurrency` senders (see the module docstring)."""
        pairs = [entry if isinstance(entry, tuple) else (entry, 0) for entry in work]
        built: asyncio.Queue[PreparedItem | None] = asyncio.Queue()
        builders = [asyncio.create_task(self._build(item, sample, built)) for item, sample in pairs]
        senders = [
            asyncio.create_task(self._send_all(built)) for _ in range(min(self.concurrency, len(pairs)))
        ]
        self._tasks = [*builders, *senders]
        self._errors = []
        try:
            outcomes = await asyncio.gather(*builders, return_exceptions=True)
            for _ in senders:
                built.put_nowait(None)  # nothing more to build: each sender stops when the queue is empty
            outcomes += await asyncio.gather(*senders, return_exceptions=True)
        finally:
            for task in self._tasks:
                task.cancel()
            await self._give_back_unsent(built)
        if self.stopped is not None:
            raise RunStopped(self.stopped)
        for outcome in [*outcomes, *self._errors]:
            if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
                raise outcome

    async def _build(self, item: Item, sample: int, built: asyncio.Queue[PreparedItem | None]) -> None:
        """Frames, request and budget of one pair, handed to the senders (with its `_open` slot)."""
        await self._open.acquire()
        handed_over = False
        try:
            if self.stopped is not None:
                return
            if self.budget is not None and self.budget.stopped:
                self.not_sent += 1
                return  # no frames decoded for a request that will not be sent
            prepared = await self.prepare(item, sample)
            if isinstance(prepared, Prediction):
                self._record(prepared)  # the media failed: nothing to send
                return
            if self.budget is not None and not await in_cache(self.backend, prepared.request):
                bound = self.bounds.bound(prepared.request) if self.bounds is not None else Bound(None, 0)
                try:
                    prepared.reserved = await self.budget.reserve(bound)
                except BudgetExhausted:
                    self.not_sent += 1
                    return
            built.put_nowait(prepared)
            handed_over = True
        finally:
            if not handed_over:
                self._open.release()

    async def _send_all(self, built: asyncio.Queue[PreparedItem | None]) -> None:
        """One sender: send built requests one at a time and record each answer, until told to stop."""
        while (prepared := await built.get()) is not None:
            try:
                self._record(await self._send(prepared))
            except Exception as error:  # a backend or the disk failing outside its contract:
                self._errors.append(error)  # raised once every other pair has had its turn
            finally:
                self._open.release()
            if self.stopped is not None:
                return

    async def _give_back_unsent(self, built: asyncio.Queue[PreparedItem | None]) -> None:
        """Requests built but never sent (the run stopped) give back the budget they held: a budget
        shared with later runs (an eval-set's) is not kept from them."""
        while not built.empty():
            prepared = built.get_nowait()
            if prepared is not None and prepared.reserved is not None and self.budget is not None:
                await self.budget.release(prepared.reserved)

    def _record(self, prediction: Prediction) -> None:
        """Append the prediction; stop the run when the error streak says the rest would fail."""
        self.log.append(prediction)
        stop = self.streak.record(prediction)
        if self.on_done is not None:
            self.on_done(prediction)
        if stop is not None and self.stopped is None:
            self.stopped = stop
            current = asyncio.current_task()
            for task in self._tasks:  # requests in flight are abandoned: their items are redone
                if task is not current:
                    task.cancel()

    async def prepare(self, item: Item, sample: int = 0) -> PreparedItem | Prediction:
        """Frames sampled and the request built; a media failure comes back as its Prediction."""
        base = {"item_id": item.id, "task": item.task, "model": self.backend.name, "sample": sample}
        prompt_text = self.suite.prompt_text(item)
        meta: dict[str, Any] = {"prompt": prompt_text, "prompt_sha256": prompt_sha256(prompt_text)}
        settings = control_sampler(self.suite.sampler(item, self.frames), self.frames_control)
        try:
            media = await self.preparer.prepare(item, settings)
        except (MediaError, OSError) as error:
            return Prediction(**base, error=str(error), error_kind=ErrorKind.MEDIA, meta=meta)
        media = arrange_media(media, self.frames_control, self.seed, item.id)
        # Only frames sampled from a video travel as a video; image lists (figures) stay images.
        mode: InputMode = self.input_mode if media.frames else "images"
        request = GenerateRequest(
            messages=self.suite.messages(item, media.images),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=item_seed(self.seed, item.id, sample),
            thinking=self.thinking,
            input_mode=mode,
            hints=self.suite.hints(item),
            metadata={
                "item_id": item.id,
                "task": item.task,
                "sample": sample,
                # Frame times give a video's frame rate to backends that take videos.
                **({FRAME_TIMES_KEY: [frame.time for frame in media.frames]} if media.frames else {}),
            },
        )
        if self.frames_control == "none":
            request = request.without_images()  # sampled and logged as for the seeing run; not sent
            mode = request.input_mode
        draft = PredictionDraft(
            **base,
            frames=media.frames,
            n_images=request.n_images,
            mode=mode,
            frame_record=frames_sent(settings) | {"frames_control": self.frames_control},
            meta=meta,
            frames_from_cache=media.from_cache,
        )
        return PreparedItem(item, sample, request, draft)

    async def _send(self, prepared: PreparedItem) -> Prediction:
        """Ask the backend; its answer or its final failure as the prediction, the budget settled."""
        reserved = prepared.reserved
        started = time.perf_counter()
        try:
            response = await self.backend.generate(prepared.request)
        except BackendError as error:
            if reserved is not None and self.budget is not None:
                await self.budget.release(reserved)
            return prepared.draft.failure(
                str(error),
                error.kind,
                sent=error.sent,
                status=error.status,
                latency_s=time.perf_counter() - started,
                extra_meta={"unreachable": True} if error.unreachable else None,
            )
        if reserved is not None and self.budget is not None:
            await self.budget.settle_usage(reserved, response.usage, cached=response.cached)
        if self.budget is not None and self.bounds is not None and not response.cached:
            # What an image costs a model without a documented rule bounds the budget's next
            # requests; without a budget nothing reads it (and the images' sizes are not decoded).
            self.bounds.observe(prepared.request, response.usage)
        return prepared.draft.answer(response)


async def in_cache(backend: ModelBackend, request: GenerateRequest) -> bool:
    """Whether the backend's response cache already holds the answer (it costs nothing then)."""
    peek = getattr(backend, "cached_response", None)
    if not callable(peek):
        return False
    return await peek(request) is not None
