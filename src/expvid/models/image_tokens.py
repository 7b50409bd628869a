"""How many input tokens one image costs, by each provider's documented rule for the size sent.

- OpenAI, tile rule (GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o1/o3; "Images and vision", calculating
  costs): scale to fit in 2048 x 2048, then so that the shortest side is at most 768 px (images
  are never scaled up: a 224 x 224 frame is one tile); count the 512 px tiles; cost =
  base + tiles x tile tokens, per model: gpt-5 family 70 + 140, 4o / 4.1 / 4.5 85 + 170,
  4o-mini 2833 + 5667, o1 / o1-pro / o3 75 + 150, computer-use-preview 65 + 129. `detail: low`
  costs the base alone.
- OpenAI, patch rule (gpt-5-mini, gpt-5-nano, gpt-4.1-mini, gpt-4.1-nano, o4-mini): 32 px patches
  covering the image, at most 1536 (larger images are shrunk by sqrt(1536 x 32^2 / (w x h)) and
  then to a whole number of patches across), times a model multiplier (1.62, 2.46, 1.62, 2.46,
  1.72).
- Anthropic (Claude "Vision", calculate image costs): tokens = width x height / 750, after an
  image whose long edge passes 1568 px or that would pass ~1600 tokens is scaled down (aspect
  kept) to fit both.
- Gemini 2.x ("Understand and count tokens"): an image with both sides <= 384 px is 258 tokens;
  a larger one is cut into 768 x 768 tiles of 258 tokens each. Gemini 1.5: 258 per image.
  Gemini 3 gives each image the `media_resolution` budget, by default MEDIA_RESOLUTION_HIGH:
  1120 tokens whatever the size.
- Qwen2-VL / Qwen2.5-VL served by vLLM (their model cards): one token per 28 x 28 px area, each
  side rounded to a multiple of 28 (a 224 x 224 frame is 64 tokens).

Anything else has no known rule: `image_tokens` returns None and estimates say so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from expvid.models.pricing import ModelRef, bare_name

#: Tile rule per OpenAI model family: (base tokens, tokens per 512 px tile).
OPENAI_TILES: tuple[tuple[str, tuple[int, int]], ...] = (
    (r"^gpt-4o-mini", (2833, 5667)),
    (r"^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-4-turbo|chatgpt-4o)", (85, 170)),
    (r"^gpt-5", (70, 140)),
    (r"^(o1|o3)", (75, 150)),
    (r"^computer-use-preview", (65, 129)),
)
#: Patch rule multipliers (checked before the tile rule: gpt-5-mini is not gpt-5).
OPENAI_PATCHES: tuple[tuple[str, float], ...] = (
    (r"^gpt-5-mini", 1.62),
    (r"^gpt-5-nano", 2.46),
    (r"^gpt-4\.1-mini", 1.62),
    (r"^gpt-4\.1-nano", 2.46),
    (r"^o4-mini", 1.72),
)
PATCH_SIZE = 32
PATCH_BUDGET = 1536
ANTHROPIC_MAX_EDGE = 1568
ANTHROPIC_MAX_TOKENS = 1600
GEMINI_TILE = 768
GEMINI_SMALL = 384
GEMINI_TOKENS = 258
GEMINI_3_DEFAULT = 1120


@dataclass(frozen=True)
class ImageCost:
    tokens: int
    #: The rule applied, for reports: "OpenAI tiles gpt-4o: 85 + 170 x 1 tile".
    rule: str


def openai_tiles(width: int, height: int, base: int, per_tile: int, detail: str = "auto") -> int:
    if detail == "low":
        return base
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    tiles = math.ceil(round(w, 6) / 512) * math.ceil(round(h, 6) / 512)
    return base + per_tile * tiles


def openai_patches(width: int, height: int, multiplier: float) -> int:
    patches = math.ceil(width / PATCH_SIZE) * math.ceil(height / PATCH_SIZE)
    if patches > PATCH_BUDGET:
        shrink = math.sqrt(PATCH_BUDGET * PATCH_SIZE**2 / (width * height))
        w, h = width * shrink, height * shrink
        # Fit the width in a whole number of patches (the guide's second scaling step).
        shrink2 = math.floor(w / PATCH_SIZE) / (w / PATCH_SIZE)
        w, h = w * shrink2, h * shrink2
        patches = min(PATCH_BUDGET, math.ceil(round(w, 6) / PATCH_SIZE) * math.ceil(round(h, 6) / PATCH_SIZE))
    return round(patches * multiplier)


def anthropic_tokens(width: int, height: int) -> int:
    scale = min(1.0, ANTHROPIC_MAX_EDGE / max(width, height))
    scale = min(scale, math.sqrt(ANTHROPIC_MAX_TOKENS * 750 / (width * height)))
    return math.ceil((width * scale) * (height * scale) / 750)


def gemini_tokens(width: int, height: int) -> int:
    if width <= GEMINI_SMALL and height <= GEMINI_SMALL:
        return GEMINI_TOKENS
    return math.ceil(width / GEMINI_TILE) * math.ceil(height / GEMINI_TILE) * GEMINI_TOKENS


def qwen_tokens(width: int, height: int) -> int:
    return max(1, round(width / 28)) * max(1, round(height / 28))


def image_tokens(ref: ModelRef, width: int, height: int, detail: str = "auto") -> ImageCost | None:
    """Input tokens of one `width` x `height` image for the model, or None when no rule is known."""
    name = bare_name(ref.model)
    family = ref.table
    if ref.provider == "offline":
        return ImageCost(0, "offline baseline: no tokens")
    if family == "openai":
        for pattern, multiplier in OPENAI_PATCHES:
            if re.match(pattern, name):
                return ImageCost(
                    openai_patches(width, height, multiplier), f"OpenAI 32 px patches x {multiplier:g}"
                )
        for pattern, (base, per_tile) in OPENAI_TILES:
            if re.match(pattern, name):
                tokens = openai_tiles(width, height, base, per_tile, detail)
                tiles = (tokens - base) // per_tile
                return ImageCost(tokens, f"OpenAI tiles: {base} + {per_tile} x {tiles} tile(s)")
        return None
    if family == "anthropic":
        return ImageCost(anthropic_tokens(width, height), "Anthropic: width x height / 750")
    if family == "gemini":
        if name.startswith("gemini-1.5"):
            return ImageCost(GEMINI_TOKENS, "Gemini 1.5: 258 per image")
        if re.match(r"^gemini-[3-9]", name):
            return ImageCost(GEMINI_3_DEFAULT, "Gemini 3: media_resolution high (default), 1120 per image")
        return ImageCost(
            gemini_tokens(width, height), "Gemini 2.x: 258 per image <= 384 px, else per 768 px tile"
        )
    if "qwen2" in name and "vl" in name:
        return ImageCost(qwen_tokens(width, height), "Qwen2-VL: one token per 28 x 28 px")
    return None
