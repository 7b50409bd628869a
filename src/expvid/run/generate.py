"""The generation phase: for each (item, sample), sample frames, ask the model, append the prediction.

Items run concurrently: a bounded number are "open" at once (frames being decoded or a request in
flight), decoding happens in worker threads, and the backend's own adaptive limiter decides how
many requests are really in flight. Every outcome, success or failure, is appended to
`predictions.jsonl` the moment it is known, so an interrupted run loses only what was in flight.
With n samples per item (pass@k), sample s is the same request with seed `seed + s` (sample 0 is
exactly the single-sample request, so it can come from the response cache); the frames are the
same for every sample.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Sequence

from expvid.media.errors import MediaError
from expvid.models.hf import FRAME_TIMES_KEY
from expvid.models.types import BackendError, GenerateRequest, ModelBackend, ThinkingConfig
from expvid.run.media_inputs import MediaPreparer
from expvid.run.rundir import AppendLog
from expvid.schema import ErrorKind, Item, Prediction
from expvid.suites.protocol import EvalSuite, FrameOptions, PromptOptions


def prompt_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class GenerationPhase:
    def __init__(
        self,
        *,
        suite: EvalSuite,
        backend: ModelBackend,
        preparer: MediaPreparer,
        log: AppendLog,
        frames: FrameOptions,
        prompt: PromptOptions,
        temperature: float,
        max_tokens: int,
        seed: int | None,
        concurrency: int,
        thinking: ThinkingConfig | None = None,
        on_done: Callable[[Prediction], None] | None = None,
    ) -> None:
        self.suite = suite
        self.backend = backend
        self.preparer = preparer
        self.log = log
        self.frames = frames
        self.prompt = prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.thinking = thinking
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
        prompt_text = self.suite.prompt_text(item, self.prompt)
        meta = {"prompt": prompt_text, "prompt_sha256": prompt_sha256(prompt_text)}
        settings = self.suite.sampler(item, self.frames)
        try:
            media = await self.preparer.prepare(item, settings)
        except (MediaError, OSError) as error:
            return Prediction(**base, error=str(error), error_kind=ErrorKind.MEDIA, meta=meta)
        request = GenerateRequest(
            messages=self.suite.messages(item, media.images, self.prompt),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=None if self.seed is None else self.seed + sample,
            thinking=self.thinking,
            hints=self.suite.hints(item),
            metadata={
                "item_id": item.id,
                "task": item.task,
                "sample": sample,
                # Frame times mark the images as one video for backends that take videos (hf:).
                **({FRAME_TIMES_KEY: [frame.time for frame in media.frames]} if media.frames else {}),
            },
        )
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
                meta=meta | {"status": error.status},
            )
        # The raw text is kept as the model wrote it (any <think> block included); extraction strips
        # reasoning before reading the answer. A separate reasoning channel is kept beside it.
        return Prediction(
            **base,
            response=response.text,
            reasoning=response.reasoning,
            frames=media.frames,
            n_images=request.n_images,
            latency_s=response.latency_s,
            usage=response.usage,
            cached=response.cached,
            request_hash=response.request_hash,
            meta=meta | {"finish_reason": response.finish_reason, "frames_from_cache": media.from_cache},
        )
