"""The generation phase: for each (item, sample), sample frames, ask the model, append the prediction.

Items run concurrently: a bounded number are "open" at once (frames being decoded or a request in
flight), decoding happens in worker threads, and the backend's own adaptive limiter decides how
many requests are really in flight. Every outcome, success or failure, is appended to
`predictions.jsonl` the moment it is known, so an interrupted run loses only what was in flight.

Seeds are per item: the request for (item, sample) carries `item_seed(seed, item id, sample)`, so
an answer never depends on which other items ran beside it (a batching backend samples each row
with its own generator) nor on the order or concurrency of the run. With n samples per item
(pass@k) the frames are the same for every sample; sample 0 is exactly the single-sample request,
so it can come from the response cache.

Each prediction records what was sent (`Prediction.sent`): the backend's own record (temperature
or none, token-limit field, reasoning effort, what a provider refused) plus the input mode and the
frame size, and a provider's refusal as an answer (`Prediction.refusal`, an empty response).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence

from expvid.media.errors import MediaError
from expvid.models.hf import FRAME_TIMES_KEY
from expvid.models.types import BackendError, GenerateRequest, InputMode, ModelBackend, ThinkingConfig
from expvid.run.media_inputs import MediaPreparer
from expvid.run.rundir import AppendLog
from expvid.schema import ErrorKind, Item, Prediction, SamplerSettings
from expvid.suites.protocol import EvalSuite, FrameOptions

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
        # Items open at once: enough to keep `concurrency` requests busy while the next frames decode.
        self._open = asyncio.Semaphore(concurrency + max(2, concurrency // 4))
        self.on_done = on_done

    async def run(self, work: Sequence[Item | tuple[Item, int]]) -> None:
        """Run items (sample 0) or (item, sample) pairs."""
        pairs = [entry if isinstance(entry, tuple) else (entry, 0) for entry in work]
        tasks = [asyncio.create_task(self._one(item, sample)) for item, sample in pairs]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()

    async def _one(self, item: Item, sample: int) -> None:
        async with self._open:
            prediction = await self._predict(item, sample)
            self.log.append(prediction)
        if self.on_done is not None:
            self.on_done(prediction)

    async def _predict(self, item: Item, sample: int = 0) -> Prediction:
        base = {"item_id": item.id, "task": item.task, "model": self.backend.name, "sample": sample}
        prompt_text = self.suite.prompt_text(item)
        meta = {"prompt": prompt_text, "prompt_sha256": prompt_sha256(prompt_text)}
        settings = self.suite.sampler(item, self.frames)
        try:
            media = await self.preparer.prepare(item, settings)
        except (MediaError, OSError) as error:
            return Prediction(**base, error=str(error), error_kind=ErrorKind.MEDIA, meta=meta)
        # Only frames sampled from a video travel as a video; image lists (SFE figures) stay images.
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
        frame_record = frames_sent(settings)
        started = time.perf_counter()
        try:
            response = await self.backend.generate(request)
        except BackendError as error:
            return Prediction(
                **base,
                error=str(error),
                error_kind=error.kind,
                frames=media.frames,
                n_images=request.n_images,
                latency_s=time.perf_counter() - started,
                sent={"input_mode": mode, **error.sent, **frame_record} if error.sent else {},
                meta=meta | {"status": error.status},
            )
        # The raw text is kept as the model wrote it (any <think> block included); extraction strips
        # reasoning before reading the answer. A separate reasoning channel is kept beside it.
        return Prediction(
            **base,
            response=response.text,
            reasoning=response.reasoning,
            refusal=response.refusal,
            finish_reason=response.finish_reason,
            sent={"input_mode": mode, **response.sent, **frame_record},
            frames=media.frames,
            n_images=request.n_images,
            latency_s=response.latency_s,
            usage=response.usage,
            cached=response.cached,
            request_hash=response.request_hash,
            # finish_reason also stays in meta, where run directories made before the field keep it.
            meta=meta | {"finish_reason": response.finish_reason, "frames_from_cache": media.from_cache},
        )
