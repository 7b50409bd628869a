"""`socratic:CAPTIONER+ANSWERER`: a two-model pipeline that captions frames with one model and answers
from the captions with another (the "Socratic model" baseline of video QA papers: e.g. LLaVA 1.5
captions the frames, Llama 3.1 answers from the captions and the text).

The request is the one any model of the run gets: the same prompt, the same frames (sampled once by
the runner). Each frame goes to the captioner alone with expvid's caption prompt
(`prompts/socratic_caption.txt`; the papers do not publish theirs), at temperature 0; the answerer
then gets the request with every run of frames replaced by their captions in time order
(`prompts/socratic_frames.txt`), and each sentence of the suite's prompt that tells the model it
sees images replaced by the suite's sentence about captions (`request.hints.caption_rewrites`, from
the suite's `caption_rewrites()`). Identical frames (prefixes of one recording share most of theirs)
are captioned once: the captioner's response cache answers the repeats. The prediction records the
captions (`sent["captions"]`), both models, the sentences rewritten and the tokens of both; a
caption that fails fails the request (recorded as a request failure, never answered from fewer frames).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import Any

from expvid.models.stats import BackendStats, ReportsStats
from expvid.models.types import (
    BackendConfigError,
    GenerateRequest,
    GenerateResponse,
    ImagePart,
    Message,
    ModelBackend,
    TextPart,
)
from expvid.schema import Usage

#: Where the answerer's spec may start in `socratic:CAPTIONER+ANSWERER`.
SPEC_STARTS = (
    "openai:",
    "anthropic:",
    "gemini:",
    "vllm:",
    "hf:",
    "blind:",
    "random",
    "longest-option",
    "first-option",
)
CAPTION_TOKENS = 128


@cache
def prompt_text(name: str) -> str:
    return files("expvid.models").joinpath("prompts", name).read_text(encoding="utf-8").strip()


def rewrite_for_captions(text: str, rewrites: Mapping[str, str]) -> tuple[str, list[str]]:
    """`text` with every sentence about images replaced by its caption sentence (`rewrites`, from the
    request's hints), and the sentences replaced."""
    applied = []
    for sentence, replacement in rewrites.items():
        if sentence in text:
            text = text.replace(sentence, replacement)
            applied.append(sentence)
    return text, applied


def split_socratic(rest: str) -> tuple[str, str]:
    """'openai:llava@http://a/v1+openai:llama@http://b/v1' -> (captioner spec, answerer spec)."""
    for index, char in enumerate(rest):
        if char == "+" and index > 0 and rest[index + 1 :].startswith(SPEC_STARTS):
            return rest[:index], rest[index + 1 :]
    raise BackendConfigError(
        f"model spec 'socratic:{rest}': expected socratic:CAPTIONER+ANSWERER, two model specs joined by '+' "
        "(e.g. socratic:openai:llava-1.5@http://host:8000/v1+openai:llama-3.1-70b@http://host:8001/v1)"
    )


def _add(total: Usage, usage: Usage) -> Usage:
    def plus(a: int | None, b: int | None) -> int | None:
        return None if a is None and b is None else (a or 0) + (b or 0)

    return Usage(
        prompt_tokens=plus(total.prompt_tokens, usage.prompt_tokens),
        completion_tokens=plus(total.completion_tokens, usage.completion_tokens),
        reasoning_tokens=plus(total.reasoning_tokens, usage.reasoning_tokens),
        cache_read_tokens=plus(total.cache_read_tokens, usage.cache_read_tokens),
    )


class SocraticBackend:
    def __init__(
        self, captioner: ModelBackend, answerer: ModelBackend, *, caption_tokens: int = CAPTION_TOKENS
    ) -> None:
        self.captioner = captioner
        self.answerer = answerer
        self.caption_tokens = caption_tokens
        self.name = f"socratic:{captioner.name}+{answerer.name}"
        #: Captions being asked right now, by frame content: a frame in flight is not asked twice.
        self._pending: dict[tuple[str, int | None], asyncio.Task[GenerateResponse]] = {}

    async def _shared_caption(self, image: ImagePart, seed: int | None) -> GenerateResponse:
        key = (image.digest, seed)
        task = self._pending.get(key)
        if task is None:
            task = asyncio.ensure_future(self._caption(image, seed))
            self._pending[key] = task
            task.add_done_callback(lambda _done: self._pending.pop(key, None))
        return await asyncio.shield(task)

    async def _caption(self, image: ImagePart, seed: int | None) -> GenerateResponse:
        request = GenerateRequest(
            messages=[
                Message(role="user", content=[image, TextPart(text=prompt_text("socratic_caption.txt"))])
            ],
            temperature=0.0,
            max_tokens=self.caption_tokens,
            seed=seed,
            metadata={"role": "socratic_captioner"},
        )
        return await self.captioner.generate(request)

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        started = time.monotonic()
        images = [
            part for message in request.messages for part in message.content if isinstance(part, ImagePart)
        ]
        if not images:
            return await self.answerer.generate(request)
        captioned = await asyncio.gather(*(self._shared_caption(image, request.seed) for image in images))
        captions = [(c.text or "").strip() or "(no caption)" for c in captioned]
        numbered = iter(enumerate(captions, start=1))
        rewrites = request.hints.caption_rewrites if request.hints is not None else {}
        messages = []
        rewritten: list[str] = []
        for message in request.messages:
            content: list[TextPart | ImagePart] = []
            run: list[str] = []
            for part in message.content:
                if isinstance(part, ImagePart):
                    index, caption = next(numbered)
                    run.append(f"Frame {index}: {caption}")
                    continue
                if run:
                    content.append(
                        TextPart(text=prompt_text("socratic_frames.txt").format(captions="\n".join(run)))
                    )
                    run = []
                text, applied = rewrite_for_captions(part.text, rewrites)
                rewritten += applied
                content.append(part if not applied else part.model_copy(update={"text": text}))
            if run:
                content.append(
                    TextPart(text=prompt_text("socratic_frames.txt").format(captions="\n".join(run)))
                )
            messages.append(Message(role=message.role, content=content))
        answered = await self.answerer.generate(
            request.model_copy(update={"messages": messages, "input_mode": "images"})
        )
        usage = answered.usage
        for reply in captioned:
            usage = _add(usage, reply.usage)
        sent = {
            "answerer": answered.sent,
            "captioner": self.captioner.name,
            "captions": captions,
            "captions_cached": sum(c.cached for c in captioned),
            "frames_captioned": len({image.digest for image in images}),
            "prompt_rewrites": rewritten,
        }
        return answered.model_copy(
            update={
                "usage": usage,
                "sent": sent,
                "latency_s": time.monotonic() - started,
                "cached": answered.cached,
            }
        )

    def describe(self) -> dict[str, Any]:
        caption = prompt_text("socratic_caption.txt")
        return {
            "name": self.name,
            "kind": "socratic",
            "captioner": self.captioner.describe(),
            "answerer": self.answerer.describe(),
            "caption_prompt": caption,
            "caption_prompt_sha256": hashlib.sha256(caption.encode()).hexdigest(),
            "caption_max_tokens": self.caption_tokens,
            "source": "a caption-then-answer (Socratic model) baseline; prompts are expvid's own",
        }

    def stats(self) -> BackendStats:
        return self.answerer.stats() if isinstance(self.answerer, ReportsStats) else BackendStats()

    async def aclose(self) -> None:
        await self.captioner.aclose()
        await self.answerer.aclose()
