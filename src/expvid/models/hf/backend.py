"""`hf:PATH`: a video-capable VLM run in this process with Hugging Face transformers.

The checkpoint's config picks the family (Qwen2-VL / Qwen2.5-VL, InternVL3 / 3.5, LLaVA-OneVision);
the checkpoint's own processor and chat template format the prompt; the harness's frames are the
only frames the model sees, as images or as one video as the run's input mode says. Concurrent
`generate()` calls are batched (see `batcher`), generation runs on one worker thread, and each
request fails alone: a frame that does not decode fails its item, an out-of-memory batch is retried
one request at a time before anything is reported failed.

Sampling draws each request's tokens with its own seeded generator (`sampling.RowSampler`), so an
answer does not depend on which requests shared its batch, and uses the run's temperature plus the
sampling settings the checkpoint's `generation_config.json` states (recorded in `describe()` and in
every response's `sent`).

Everything a user can get wrong (path, missing weights, unsupported architecture, device, missing
packages) fails in the constructor, before the first item.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from expvid.models.cache import ResponseCache, cache_key, cached_response
from expvid.models.hf.batcher import MicroBatcher
from expvid.models.hf.checkpoint import Checkpoint, checkpoint_generation_config, read_checkpoint
from expvid.models.hf.inputs import Visuals, build_visuals, frame_rate, frames_as_video
from expvid.models.options import BackendOptions
from expvid.models.remote import check_image_cap
from expvid.models.stats import BackendStats
from expvid.models.types import BackendConfigError, BackendError, GenerateRequest, GenerateResponse
from expvid.schema import ErrorKind, Usage


@dataclass(frozen=True)
class _Row:
    """One request of a batch, with its pictures decoded for the processor."""

    visuals: Visuals
    request: GenerateRequest


@dataclass(frozen=True)
class _Settings:
    """What must be equal for requests to share a batch."""

    temperature: float
    max_tokens: int
    thinking: bool | None
    budget: int | None
    n_images: int
    as_video: bool


def _import_runtime(spec: str) -> None:
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        raise BackendConfigError(
            f"{spec}: the transformers backend needs torch and transformers ({error}); "
            "install them with: pip install 'expvid[hf]'"
        ) from None


class HFBackend:
    kind = "hf"

    def __init__(self, spec_path: str, options: BackendOptions) -> None:
        self.spec_path = spec_path
        self.name = f"hf:{spec_path}"
        self.options = options
        self.checkpoint: Checkpoint = read_checkpoint(spec_path)
        if options.input_mode is not None and options.frames_as not in ("auto", options.input_mode):
            raise BackendConfigError(
                f"{self.name}: frames_as={options.frames_as!r} contradicts the run's input mode "
                f"{options.input_mode!r}; set the form with --input-mode only"
            )
        _import_runtime(self.name)
        from expvid.models.hf.loading import choose_placement, load_model, load_processor
        from expvid.models.hf.thinking import think_token_ids

        self.placement = choose_placement(options.device, options.device_map, options.dtype)
        #: What the checkpoint's generation_config.json sets (top_k, top_p, repetition_penalty, ...).
        self.generation_config = checkpoint_generation_config(self.checkpoint.path)
        self.processor, self.video_processor_source = load_processor(self.checkpoint)
        loaded = load_model(self.checkpoint, self.placement, options.attn_implementation)
        self.model = loaded.model
        self.unexpected_weights = loaded.unexpected_weights
        self._think_ids = think_token_ids(self.processor.tokenizer)
        self._eos_ids = self._eos_token_ids()
        self._counters = BackendStats(limit=options.batch_size, max_limit=options.batch_size)
        self._closing = threading.Event()
        self.cache = ResponseCache(options.cache_dir) if options.cache_dir is not None else None
        self._batcher: MicroBatcher[GenerateRequest, GenerateResponse] = MicroBatcher(
            self._run_batch,
            key=self._batch_key,
            cost=lambda request: max(1, request.n_images),
            max_size=options.batch_size,
            max_cost=options.max_batch_images,
            wait_s=options.batch_wait_s,
        )

    # -- the protocol --------------------------------------------------------------------------

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        check_image_cap(request, self.options.max_images, self.name)
        budget = request.thinking.budget_tokens if request.thinking is not None else None
        if request.thinking is not None and request.thinking.enabled and budget and self._think_ids is None:
            raise BackendError(
                f"{self.name}: a thinking budget needs <think> and </think> to be single tokens of the "
                "tokenizer; this model's are not, so the budget cannot be enforced",
                kind=ErrorKind.OTHER,
            )
        key = self.request_hash(request)
        hit = await cached_response(self.cache, key, self._counters)
        if hit is not None:
            return hit
        response = (await self._batcher.submit(request)).model_copy(update={"request_hash": key})
        if self.cache is not None:
            await self.cache.aput(key, response)
        return response

    def request_hash(self, request: GenerateRequest) -> str:
        """Everything that changes the answer: the request, the checkpoint, and how frames are fed."""
        as_video = frames_as_video(request, self.options.frames_as)
        fps = frame_rate(request, request.n_images, self.options.video_fps) if as_video else None
        return cache_key(
            request,
            backend=self.kind,
            model=str(self.checkpoint.path),
            base_url=None,
            extra={
                "dtype": self.placement.dtype,
                "frames_as_video": as_video,
                "video_fps": fps,
                "sampling": "per-request generator",
            },
        )

    def input_modes(self) -> tuple[str, ...]:
        return ("images", "video")

    def describe(self) -> dict[str, Any]:
        import torch
        import transformers

        options = self.options
        return {
            "name": self.name,
            "kind": self.kind,
            "model_path": str(self.checkpoint.path),
            "model_type": self.checkpoint.model_type,
            "family": self.checkpoint.family.name,
            "architectures": self.checkpoint.architectures,
            "model_class": self.checkpoint.family.model_class,
            "processor_class": self.checkpoint.family.processor_class,
            "video_processor": self.video_processor_source,
            "device": self.placement.device,
            "device_map": self.placement.device_map,
            "dtype": self.placement.dtype,
            "attn_implementation": options.attn_implementation,
            "batch_size": options.batch_size,
            "max_batch_images": options.max_batch_images,
            "frames_as": options.frames_as,
            "input_mode": options.input_mode,
            "video_fps": options.video_fps,
            "generation_config": {
                **self.generation_config,
                "source": str(self.checkpoint.path / "generation_config.json"),
            },
            "sampling": "per-request seeded generators (answers do not depend on batching)",
            "batches": self._batcher.batches,
            "largest_batch": self._batcher.largest_batch,
            "max_images": options.max_images,
            "cache_dir": None if options.cache_dir is None else str(options.cache_dir),
            "thinking_budget_supported": self._think_ids is not None,
            "unexpected_weights": self.unexpected_weights,
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
        }

    def stats(self) -> BackendStats:
        snapshot = BackendStats(**self._counters.snapshot())
        snapshot.in_flight = self._batcher.running
        snapshot.peak_in_flight = self._batcher.largest_batch
        return snapshot

    @property
    def batches(self) -> int:
        """Forward passes run so far (each answers one batch of requests)."""
        return self._batcher.batches

    async def aclose(self) -> None:
        """Stop a running generation at its next token, then the worker thread. Reusable afterwards."""
        self._closing.set()
        try:
            await asyncio.to_thread(self._batcher.close)
        finally:
            self._closing.clear()
        if self.cache is not None:
            self.cache.close()

    # -- batching ------------------------------------------------------------------------------

    def _settings(self, request: GenerateRequest) -> _Settings:
        thinking = request.thinking
        return _Settings(
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            thinking=None if thinking is None else thinking.enabled,
            budget=None if thinking is None else thinking.budget_tokens,
            n_images=request.n_images,
            as_video=frames_as_video(request, self.options.frames_as),
        )

    def _batch_key(self, request: GenerateRequest) -> Hashable:
        return self._settings(request)

    def _run_batch(self, requests: Sequence[GenerateRequest]) -> list[GenerateResponse | BaseException]:
        """Runs on the worker thread: prepare each request, generate for the good ones together."""
        results: list[GenerateResponse | BaseException | None] = [None] * len(requests)
        prepared: list[tuple[int, _Row]] = []
        for index, request in enumerate(requests):
            try:
                prepared.append((index, _Row(self._visuals(request), request)))
            except BackendError as error:
                results[index] = error
        if prepared:
            settings = self._settings(requests[prepared[0][0]])
            for index, generated in zip(
                [i for i, _ in prepared],
                self._generate_resilient([row for _, row in prepared], settings),
                strict=True,
            ):
                results[index] = generated
        for outcome in results:
            if isinstance(outcome, BaseException):
                self._counters.failures += 1
            else:
                self._counters.successes += 1
        self._counters.requests += len(requests)
        return [r if r is not None else BackendError(f"{self.name}: no result") for r in results]

    def _visuals(self, request: GenerateRequest) -> Visuals:
        item = request.metadata.get("item_id")
        where = f"{self.name} (item {item})" if item is not None else self.name
        return build_visuals(
            request, frames_as=self.options.frames_as, default_fps=self.options.video_fps, where=where
        )

    def _generate_resilient(
        self, batch: list[_Row], settings: _Settings
    ) -> list[GenerateResponse | BaseException]:
        import torch

        try:
            return list(self._generate(batch, settings))
        except torch.OutOfMemoryError as error:
            self._free_memory()
            if len(batch) == 1:
                return [self._failure("out of GPU memory", error)]
            # One request at a time before giving up: a batch that does not fit often fits alone.
            outcomes: list[GenerateResponse | BaseException] = []
            for one in batch:
                outcomes.extend(self._generate_resilient([one], settings))
            return outcomes
        except BackendError as error:
            return [error] * len(batch)
        except Exception as error:
            return [self._failure("generation failed", error)] * len(batch)

    def _failure(self, what: str, error: BaseException) -> BackendError:
        return BackendError(f"{self.name}: {what}: {type(error).__name__}: {error}", kind=ErrorKind.OTHER)

    def _free_memory(self) -> None:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # -- one forward pass ----------------------------------------------------------------------

    def _processor_inputs(self, batch: list[Visuals], settings: _Settings) -> Any:
        from transformers.video_utils import VideoMetadata

        template_kwargs: dict[str, Any] = {}
        if settings.thinking is not None:
            template_kwargs["enable_thinking"] = bool(settings.thinking and settings.budget != 0)
        texts = [
            self.processor.apply_chat_template(
                visuals.conversation, tokenize=False, add_generation_prompt=True, **template_kwargs
            )
            for visuals in batch
        ]
        call: dict[str, Any] = {"text": texts, "padding": True, "return_tensors": "pt"}
        if any(v.images for v in batch):
            call["images"] = [v.images for v in batch]
        videos = [video for v in batch for video in v.videos]
        if videos:
            call["videos"] = videos
            call["do_sample_frames"] = False  # the harness sampled them; the model's sampler must not
            call["video_metadata"] = [
                VideoMetadata(total_num_frames=len(video), fps=fps, frames_indices=list(range(len(video))))
                for v in batch
                for video, fps in zip(v.videos, v.video_fps, strict=True)
            ]
        return self.processor(**call)

    def _sampling(self, settings: _Settings) -> dict[str, Any]:
        """The sampling settings that apply: the run's temperature and the checkpoint's own."""
        applied: dict[str, Any] = {}
        if settings.temperature > 0:
            applied.update(
                {
                    k: self.generation_config[k]
                    for k in ("top_k", "top_p", "min_p")
                    if k in self.generation_config
                }
            )
        if "repetition_penalty" in self.generation_config:
            applied["repetition_penalty"] = self.generation_config["repetition_penalty"]
        return applied

    def _sent(self, row: _Row, settings: _Settings) -> dict[str, Any]:
        request = row.request
        sent: dict[str, Any] = {
            "temperature": settings.temperature,
            "do_sample": settings.temperature > 0,
            "token_limit_field": "max_new_tokens",
            "max_tokens": settings.max_tokens,
            "seed": request.seed,
            "input_mode": "video" if settings.as_video else "images",
            **self._sampling(settings),
        }
        if settings.as_video:
            sent["video_fps"] = round(frame_rate(request, request.n_images, self.options.video_fps), 6)
        if request.response_schema is not None:
            sent["not_sent"] = {"response_format": "local generation is not constrained to a JSON schema"}
        return sent

    def _generate(self, rows: list[_Row], settings: _Settings) -> list[GenerateResponse]:
        import torch

        from expvid.models.hf.sampling import RowSampler
        from expvid.models.hf.stopping import StopWhenSet
        from expvid.models.hf.thinking import ThinkingBudget

        started = time.monotonic()
        batch = [row.visuals for row in rows]
        inputs = self._processor_inputs(batch, settings)
        device = self.model.device
        inputs = inputs.to(device)
        dtype = getattr(torch, self.placement.dtype)
        for key in ("pixel_values", "pixel_values_videos"):
            if key in inputs and torch.is_floating_point(inputs[key]):
                inputs[key] = inputs[key].to(dtype)
        prompt_length = int(inputs["input_ids"].shape[1])
        # Always transformers' greedy loop: when sampling, RowSampler (last processor) has already
        # drawn each row's token with the row's own generator and left only it possible.
        sampling = self._sampling(settings)
        generation: dict[str, Any] = {
            "max_new_tokens": settings.max_tokens,
            "stopping_criteria": [StopWhenSet(self._closing)],
            "do_sample": False,
            "temperature": None,
            "top_p": None,
            "top_k": None,
            "min_p": None,
            "repetition_penalty": sampling.get("repetition_penalty"),
        }
        processors: list[Any] = []
        if settings.thinking and settings.budget and self._think_ids is not None:
            open_id, close_id = self._think_ids
            processors.append(
                ThinkingBudget(
                    budget=settings.budget, open_id=open_id, close_id=close_id, prompt_length=prompt_length
                )
            )
        if settings.temperature > 0:
            processors.append(
                RowSampler(
                    [row.request.seed for row in rows],
                    temperature=settings.temperature,
                    top_k=sampling.get("top_k"),
                    top_p=sampling.get("top_p"),
                    min_p=sampling.get("min_p"),
                    device=device,
                )
            )
        if processors:
            generation["logits_processor"] = processors
        with torch.inference_mode():
            output = self.model.generate(**inputs, **generation)
        if self._closing.is_set():  # cut short by aclose(): a partial answer is not an answer
            raise BackendError(f"{self.name}: generation interrupted (backend closed)", kind=ErrorKind.OTHER)
        latency = time.monotonic() - started
        new_tokens = output[:, prompt_length:].cpu()
        prompt_tokens = inputs["attention_mask"].sum(dim=1).tolist()
        responses = []
        for index in range(new_tokens.shape[0]):
            tokens = new_tokens[index].tolist()
            length, finish = self._completion_length(tokens, settings.max_tokens)
            text = self.processor.tokenizer.decode(tokens[:length], skip_special_tokens=True)
            responses.append(
                GenerateResponse(
                    text=text,
                    finish_reason=finish,
                    usage=Usage(prompt_tokens=int(prompt_tokens[index]), completion_tokens=length),
                    latency_s=latency,
                    model=self.checkpoint.path.name,
                    sent=self._sent(rows[index], settings),
                )
            )
        return responses

    def _completion_length(self, tokens: list[int], max_tokens: int) -> tuple[int, str]:
        """Tokens up to and including the first end-of-turn token, and why generation stopped."""
        for position, token in enumerate(tokens):
            if token in self._eos_ids:
                return position + 1, "stop"
        return len(tokens), "length" if len(tokens) >= max_tokens else "stop"

    def _eos_token_ids(self) -> set[int]:
        ids: set[int] = set()
        config = getattr(self.model, "generation_config", None)
        value = getattr(config, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(int(v) for v in value)
        tokenizer_eos = getattr(self.processor.tokenizer, "eos_token_id", None)
        if isinstance(tokenizer_eos, int):
            ids.add(tokenizer_eos)
        return ids
