"""Prompt tokens the way a provider counts them, for loopback answers that report real usage.

`Reply.counted(...)` answers report, instead of a fixed figure, what the provider would bill for
the request that arrived: every image by the provider's documented rule for its decoded size
(`models.image_tokens`; OpenAI's `auto` detail served at high detail, as it may be), and the text
at ~4 characters a token plus 3 tokens a message and 3 for the reply (OpenAI's chat accounting).
So a budget is tested against usage that grows with the frames a request really carries.
"""

from __future__ import annotations

import io
import math

from PIL import Image

from expvid.fakes.models.request_shapes import RecordedRequest
from expvid.models.image_tokens import image_tokens
from expvid.models.pricing import ModelRef

PROVIDERS = {"openai": "openai", "openai-responses": "openai", "anthropic": "anthropic", "gemini": "gemini"}


def provider_prompt_tokens(record: RecordedRequest) -> int:
    ref = ModelRef(PROVIDERS.get(record.protocol, "openai"), record.model)  # type: ignore[arg-type]
    images = 0
    for index, data in enumerate(record.images):
        with Image.open(io.BytesIO(data)) as picture:
            width, height = picture.size
        detail = record.image_details[index] if index < len(record.image_details) else "auto"
        cost = image_tokens(ref, width, height, "high" if detail == "auto" else detail)
        images += cost.tokens if cost is not None else 0
    text = sum(math.ceil(len(part) / 4) for part in record.texts)
    return images + text + 3 * len(record.roles) + 3
