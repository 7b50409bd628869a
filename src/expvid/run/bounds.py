"""The most one request can cost: what a budget admits it by (`--max-cost`, `--max-tokens-total`).

A request is admitted by its own upper bound, never by an average, so a 128-frame Level-3 request
is never priced like the 8-frame answers that came before it:

- images: each frame by the provider's documented rule for the size sent (`models.image_tokens`);
  OpenAI tiles at the `detail` sent (`auto` may be served at `low`: the high-detail count bounds it);
- text: one token per UTF-8 byte of every text part (a byte-level BPE token, or a SentencePiece
  byte fallback, covers at least one byte), plus a few tokens per message for the chat template;
- output: the request's own `max_tokens`, which caps the visible answer and the hidden reasoning
  together on every provider expvid sends to (OpenAI `max_completion_tokens` / `max_output_tokens`,
  Claude `max_tokens` with its thinking budget inside, Gemini `maxOutputTokens`, which caps thoughts
  and answer together in practice: googleapis/python-genai#2062);
- price: the run's price per request (a long-context tier applies when this request's prompt bound
  passes its threshold), at the batch discount for a batch.

A model without a documented image rule has no bound before it has answered: the first request
goes alone, and afterwards each image is bounded by the most prompt tokens per image any answer
of the run has reported (a measurement, not a rule: `Bound.ruled` is False and the docs say so).
"""

from __future__ import annotations

import dataclasses
import io
import math
from dataclasses import dataclass, field
from typing import Protocol

from PIL import Image

from expvid.models.image_tokens import image_tokens
from expvid.models.pricing import ModelRef, Price
from expvid.models.types import GenerateRequest, ImagePart, TextPart
from expvid.schema import Usage

#: Tokens a chat template adds around each message, and around the whole request (an upper bound:
#: OpenAI documents 3 per message and 3 for the reply's priming).
MESSAGE_OVERHEAD = 8
REQUEST_OVERHEAD = 16


@dataclass(frozen=True)
class Bound:
    """The most a request can cost: USD (None: unpriced) and tokens (prompt + output)."""

    usd: float | None
    tokens: int
    #: Of `tokens`, the prompt's (what a provider's batch queue counts as enqueued).
    prompt_tokens: int = 0
    #: False when the images' share is not known yet (no documented rule, no answer measured):
    #: such a request is sent alone, and its answer says what images cost.
    known: bool = True
    #: False when the images' share rests on a measurement instead of a documented rule.
    ruled: bool = True
    #: Held for a request in a provider's batch (it gives its room back when the batch is merged,
    #: not while online requests wait).
    batched: bool = False

    def scaled(self, factor: float) -> Bound:
        """The same bound at a discounted price (a batch)."""
        return dataclasses.replace(self, usd=None if self.usd is None else self.usd * factor)


FREE = Bound(0.0, 0)


class Bounder(Protocol):
    """What a phase asks of a run's pricing: a request's bound, and what an answer taught."""

    def bound(self, request: GenerateRequest) -> Bound: ...

    def observe(self, request: GenerateRequest, usage: Usage | None) -> None: ...


def text_bound(text: str) -> int:
    return len(text.encode("utf-8"))


def image_sizes(request: GenerateRequest) -> list[tuple[int, int]]:
    """(width, height) of every image a request sends, read from the encoded bytes' headers."""
    sizes = []
    for message in request.messages:
        for part in message.content:
            if isinstance(part, ImagePart):
                try:
                    with Image.open(io.BytesIO(part.data)) as picture:
                        sizes.append(picture.size)
                except OSError:
                    sizes.append((0, 0))
    return sizes


@dataclass
class RequestBounds:
    """Bounds of one run's requests: its model, price and image `detail`, and what answers measured."""

    ref: ModelRef
    price: Price | None
    #: OpenAI `detail` as sent (None: not sent, the API's "auto").
    detail: str | None = None
    #: The model sees no images (`blind:`): they are removed before sending.
    blind: bool = False
    #: The most prompt tokens per image an answer of this run reported (models without a rule).
    _per_image_seen: int | None = field(default=None, repr=False)

    def bound(self, request: GenerateRequest) -> Bound:
        text = REQUEST_OVERHEAD
        for message in request.messages:
            text += MESSAGE_OVERHEAD
            for part in message.content:
                if isinstance(part, TextPart):
                    text += text_bound(part.text)
        images, known, ruled = 0, True, True
        if not self.blind:
            for width, height in image_sizes(request):
                cost = image_tokens(self.ref, width, height, self.detail or "high")
                if cost is not None:
                    images += cost.tokens
                elif self._per_image_seen is not None:
                    images += self._per_image_seen
                    ruled = False
                else:
                    known, ruled = False, False
        prompt = text + images
        output = request.max_tokens
        usd = None if self.price is None else self.price.cost(prompt, output)
        return Bound(usd, prompt + output, prompt, known, ruled)

    def observe(self, request: GenerateRequest, usage: Usage | None) -> None:
        """Learn what an image costs a model without a documented rule from a reported answer."""
        if self.blind or usage is None or not usage.prompt_tokens:
            return
        sizes = image_sizes(request)
        if not sizes or all(image_tokens(self.ref, w, h) is not None for w, h in sizes):
            return
        per_image = math.ceil(usage.prompt_tokens / len(sizes))
        if self._per_image_seen is None or per_image > self._per_image_seen:
            self._per_image_seen = per_image
