"""How many input tokens one image costs, by each provider's documented rule for the size sent.

Each rule was checked on 2026-11-26 against the provider's documentation (stored copies found with
the `search` tool), and the tests reproduce the providers' own worked examples:

- OpenAI, "Images and vision" > Calculating costs (platform.openai.com/docs/guides/images-vision):
  - patch rule for gpt-5-mini, gpt-5-nano (x 1.62, x 2.46), gpt-4.1-mini, gpt-4.1-nano
    (x 1.62, x 2.46) and o4-mini (x 1.72): the 32 px patches covering the image; above 1536
    patches the image is shrunk by r = sqrt(32^2 x 1536 / (w x h)), then by
    min(floor(w r / 32) / (w r / 32), floor(h r / 32) / (h r / 32)) so that BOTH sides fit whole
    patches, and the patches are counted again; tokens = patches x the model's multiplier.
  - tile rule for gpt-5 / gpt-5-chat-latest (base 70, 140 a tile), 4o / 4.1 / 4.5 (85, 170),
    4o-mini (2833, 5667), o1 / o1-pro / o3 (75, 150), computer-use-preview (65, 129): fit in
    2048 x 2048, then a shortest side of at most 768 px (never scaled up: a 224 x 224 frame is
    one tile), count the 512 px tiles; `detail: low` costs the base alone.
  - No other model is listed (gpt-5-pro, gpt-5.1, o3-pro, ...): no rule, and estimates say so.
- Anthropic, "Vision" > Evaluate image size and "How Claude resizes and pads images"
  (platform.claude.com/docs/en/build-with-claude/vision, .../vision-coordinates): an image costs
  ceil(w / 28) x ceil(h / 28) visual tokens at the size Claude serves it; an image over the
  model's limits is first resized to the largest aspect-preserving size that fits both (the
  documentation's reference implementation, `claude_resized`): standard tier 1568 px a side and
  1568 tokens, high-resolution tier ("Claude 4.7 and later models") 2576 px and 4784 tokens.
- Gemini, "Understand and count tokens" (ai.google.dev/gemini-api/docs/tokens): Gemini 2.x, an
  image with both sides <= 384 px is 258 tokens, a larger one is cut into 768 x 768 tiles of
  258 tokens each; Gemini 1.5, 258 per image; Gemini 3 ("Media resolution", token counts) gives
  an image the `media_resolution` budget, by default MEDIA_RESOLUTION_HIGH, 1120 tokens whatever
  its size (expvid sends no media_resolution).
- Qwen2-VL / Qwen2.5-VL served by vLLM (their model cards): one token per 28 x 28 px area, each
  side rounded to a multiple of 28 (a 224 x 224 frame is 64 tokens).

Anything else has no known rule: `image_tokens` returns None and estimates say so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from expvid.models.pricing import ModelRef, bare_name, undated_name

#: Tile rule per OpenAI model, by undated name: (base tokens, tokens per 512 px tile).
OPENAI_TILES: dict[str, tuple[int, int]] = {
    "gpt-5": (70, 140),
    "gpt-5-chat": (70, 140),
    "gpt-4o": (85, 170),
    "chatgpt-4o": (85, 170),
    "gpt-4.1": (85, 170),
    "gpt-4.5-preview": (85, 170),
    "gpt-4o-mini": (2833, 5667),
    "o1": (75, 150),
    "o1-pro": (75, 150),
    "o3": (75, 150),
    "computer-use-preview": (65, 129),
}
#: Patch rule multipliers, by undated name.
OPENAI_PATCHES: dict[str, float] = {
    "gpt-5-mini": 1.62,
    "gpt-5-nano": 2.46,
    "gpt-4.1-mini": 1.62,
    "gpt-4.1-nano": 2.46,
    "o4-mini": 1.72,
}
PATCH_SIZE = 32
PATCH_BUDGET = 1536
CLAUDE_PATCH = 28
#: (max edge px, max visual tokens) of Claude's two resolution tiers.
CLAUDE_STANDARD = (1568, 1568)
CLAUDE_HIGH_RES = (2576, 4784)
#: Claude models from this (major, minor) version on are on the high-resolution tier.
CLAUDE_HIGH_RES_FROM = (4, 7)
GEMINI_TILE = 768
GEMINI_SMALL = 384
GEMINI_TOKENS = 258
GEMINI_3_DEFAULT = 1120
_CLAUDE_VERSION = re.compile(r"^claude-(?:opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d{1,2}))?(?:-|$)")


@dataclass(frozen=True)
class ImageCost:
    tokens: int
    #: The rule applied, for reports: "OpenAI tiles: 85 + 170 x 1 tile(s)".
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


def _whole_patches(length: float) -> int:
    """Patches covering `length` px; `round` keeps 33.0000000001 (a float's error) at 33."""
    return math.ceil(round(length / PATCH_SIZE, 6))


def openai_patch_count(width: int, height: int) -> int:
    """The 32 px patches an image is billed for, before the model's multiplier (step A to C)."""
    patches = _whole_patches(width) * _whole_patches(height)
    if patches <= PATCH_BUDGET:
        return patches
    shrink = math.sqrt(PATCH_SIZE**2 * PATCH_BUDGET / (width * height))
    across, down = width * shrink / PATCH_SIZE, height * shrink / PATCH_SIZE
    shrink *= min(math.floor(across) / across, math.floor(down) / down)
    return min(PATCH_BUDGET, _whole_patches(width * shrink) * _whole_patches(height * shrink))


def openai_patches(width: int, height: int, multiplier: float) -> int:
    return round(openai_patch_count(width, height) * multiplier)


def claude_visual_tokens(width: int, height: int) -> int:
    return math.ceil(width / CLAUDE_PATCH) * math.ceil(height / CLAUDE_PATCH)


def claude_resized(width: int, height: int, max_edge: int, max_tokens: int) -> tuple[int, int]:
    """The size Claude serves an image at (before padding): Anthropic's reference implementation."""

    def fits(w: int, h: int) -> bool:
        return (
            math.ceil(w / CLAUDE_PATCH) * CLAUDE_PATCH <= max_edge
            and math.ceil(h / CLAUDE_PATCH) * CLAUDE_PATCH <= max_edge
            and claude_visual_tokens(w, h) <= max_tokens
        )

    if fits(width, height):
        return width, height
    if height > width:
        resized_h, resized_w = claude_resized(height, width, max_edge, max_tokens)
        return resized_w, resized_h
    aspect = width / height
    lo, hi = 1, width  # lo always fits, hi never does
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if fits(mid, max(round(mid / aspect), 1)):  # round(): half to even, as the live API
            lo = mid
        else:
            hi = mid
    return lo, max(round(lo / aspect), 1)


def claude_tier(model: str) -> tuple[int, int]:
    """(max edge, max visual tokens) of the model's resolution tier."""
    match = _CLAUDE_VERSION.match(bare_name(model))
    version = (int(match.group(1)), int(match.group(2) or 0)) if match else (0, 0)
    return CLAUDE_HIGH_RES if version >= CLAUDE_HIGH_RES_FROM else CLAUDE_STANDARD


def anthropic_tokens(width: int, height: int, tier: tuple[int, int] = CLAUDE_STANDARD) -> int:
    return claude_visual_tokens(*claude_resized(width, height, *tier))


def gemini_tokens(width: int, height: int) -> int:
    if width <= GEMINI_SMALL and height <= GEMINI_SMALL:
        return GEMINI_TOKENS
    return math.ceil(width / GEMINI_TILE) * math.ceil(height / GEMINI_TILE) * GEMINI_TOKENS


def qwen_tokens(width: int, height: int) -> int:
    return max(1, round(width / 28)) * max(1, round(height / 28))


def _openai(name: str, width: int, height: int, detail: str) -> ImageCost | None:
    family = undated_name(name)
    multiplier = OPENAI_PATCHES.get(family)
    if multiplier is not None:
        return ImageCost(openai_patches(width, height, multiplier), f"OpenAI 32 px patches x {multiplier:g}")
    tile = OPENAI_TILES.get(family)
    if tile is None:
        return None
    base, per_tile = tile
    tokens = openai_tiles(width, height, base, per_tile, detail)
    return ImageCost(tokens, f"OpenAI tiles: {base} + {per_tile} x {(tokens - base) // per_tile} tile(s)")


def image_tokens(ref: ModelRef, width: int, height: int, detail: str = "auto") -> ImageCost | None:
    """Input tokens of one `width` x `height` image for the model, or None when no rule is known."""
    name = bare_name(ref.model)
    family = ref.table
    if ref.provider == "offline":
        return ImageCost(0, "offline baseline: no tokens")
    if family == "openai":
        return _openai(name, width, height, detail)
    if family == "anthropic":
        tier = claude_tier(name)
        label = "high-resolution" if tier == CLAUDE_HIGH_RES else "standard"
        return ImageCost(
            anthropic_tokens(width, height, tier),
            f"Anthropic: 28 px patches, {label} tier ({tier[0]} px, {tier[1]} tokens at most)",
        )
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
