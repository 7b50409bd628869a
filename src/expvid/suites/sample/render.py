"""Deterministic frames for a synthetic experiment video.

Every frame carries its SOURCE frame number (`draw_frame_code`), so a clip rendered from a range
of source frames shows exactly which frames it holds. What a step looks like depends on the step:
the tool, material, quantity and operation are written as large text, the tool is drawn as a
shape and colour of its own, and the operation decides how it moves. A capable VLM could answer
the Level-1 questions from the frames; Level-2 order is visible from the sequence of labels.
The concluding slide shows the results as text (what the Level-3 trim removes).

Speed: text is drawn once per step into a static layer; each frame is a copy of its layer, a
sprite blitted at a moving offset, and the frame code.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Iterator
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from expvid.media.synth import code_band_height, draw_frame_code
from expvid.suites.sample.layout import HEIGHT, WIDTH
from expvid.suites.sample.scripts import ExperimentScript, StepScript
from expvid.suites.sample.timeline import Timeline

_STAGE_COLOURS = ((38, 70, 83), (52, 58, 94), (70, 54, 72), (40, 80, 60), (84, 66, 40))
_TOOL_COLOURS = (
    (230, 57, 70),
    (244, 162, 97),
    (233, 196, 106),
    (42, 157, 143),
    (69, 123, 157),
    (168, 218, 220),
    (181, 101, 219),
    (255, 255, 255),
)
_SHAPES = ("pipette", "disc", "flask", "box", "diamond", "cross")
_MOTIONS = ("dip", "sweep", "circle", "shake")
#: The bundled Pillow font lacks a few glyphs that lab text uses.
_DRAWABLE = str.maketrans({"µ": "u", "μ": "u", "×": "x"})
_SPRITE_W, _SPRITE_H = 22, 30

Sprite = tuple[np.ndarray, np.ndarray]  # rgb (h, w, 3), mask (h, w, 1)


class FrameRenderer:
    """Frames of one experiment's source video, by source frame number."""

    def __init__(
        self, script: ExperimentScript, timeline: Timeline, width: int = WIDTH, height: int = HEIGHT
    ):
        self.width, self.height, self.fps = width, height, timeline.fps
        self.n_frames = timeline.n_frames
        stage_of_step = [s for s, numbers in enumerate(timeline.stage_steps) for _ in numbers]
        self._layers = [self._step_layer(step, stage_of_step[i]) for i, step in enumerate(script.steps)] + [
            self._slide_layer(script)
        ]
        self._sprites: list[Sprite | None] = [_sprite(step.tool) for step in script.steps] + [None]
        self._motions = [_pick(_MOTIONS, step.operation) for step in script.steps] + ["none"]
        self._starts = [start for start, _ in timeline.steps] + [timeline.slide[0]]
        # Rows that draw_frame_code writes: the band, then digits of scale height // 60, 5 cells tall.
        self._code_height = code_band_height(height) + 2 + 5 * max(1, height // 60)
        if self.height * 0.70 - _SPRITE_H / 2 - 8 < self._code_height:
            raise ValueError(f"{width}x{height} frames are too small for the sprite to clear the frame code")
        self._code_rows: dict[int, np.ndarray] = {}
        self._layer_of_frame = np.empty(self.n_frames, dtype=np.int32)
        for index, (start, end) in enumerate([*timeline.steps, timeline.slide]):
            self._layer_of_frame[start:end] = index

    def frame(self, index: int) -> np.ndarray:
        out = np.empty((self.height, self.width, 3), dtype=np.uint8)
        self._render_into(out, index)
        return out

    def frames(self, ranges: Iterable[tuple[int, int]]) -> Iterator[np.ndarray]:
        """Frames of the given [start, end) ranges, in order, rendered into ONE reused buffer.

        Streaming beats materialising the video: page-faulting a fresh (n, h, w, 3) array cost
        4x the rendering itself. Consumers must copy what they keep (`write_video` does: each
        frame is copied into the encoder's own frame before the next one is rendered).
        """
        buffer = np.empty((self.height, self.width, 3), dtype=np.uint8)
        for start, end in ranges:
            for index in range(start, end):
                self._render_into(buffer, index)
                yield buffer

    def _render_into(self, out: np.ndarray, index: int) -> None:
        if not 0 <= index < self.n_frames:
            raise IndexError(f"frame {index} outside 0..{self.n_frames - 1}")
        layer = int(self._layer_of_frame[index])
        out[...] = self._layers[layer]
        sprite = self._sprites[layer]
        if sprite is not None:
            t = (index - self._starts[layer]) / self.fps
            x, y = self._sprite_position(self._motions[layer], t)
            rgb, mask = sprite
            region = out[y : y + _SPRITE_H, x : x + _SPRITE_W]
            np.copyto(region, rgb, where=mask)
        # The code rows of frame i only ever show frame i's layer (the sprite stays below them), so
        # a clip can reuse the rows drawn for the source video: half the cost of drawing codes.
        cached = self._code_rows.get(index)
        if cached is None:
            draw_frame_code(out, index)
            self._code_rows[index] = out[: self._code_height].copy()
        else:
            out[: self._code_height] = cached

    def _sprite_position(self, motion: str, t: float) -> tuple[int, int]:
        """Top-left corner of the tool sprite: it moves over the bench as the operation suggests."""
        cx, cy = self.width * 0.72, self.height * 0.70
        if motion == "dip":
            dx, dy = 0.0, 12.0 * abs(math.sin(math.pi * 0.6 * t)) - 6.0
        elif motion == "sweep":
            dx, dy = 40.0 * math.sin(2 * math.pi * 0.25 * t), 0.0
        elif motion == "circle":
            dx, dy = 22.0 * math.cos(2 * math.pi * 0.4 * t), 8.0 * math.sin(2 * math.pi * 0.4 * t)
        else:  # shake
            dx, dy = 8.0 * math.sin(2 * math.pi * 2.0 * t), 2.0 * math.sin(2 * math.pi * 3.0 * t)
        x = round(cx + dx - _SPRITE_W / 2)
        y = round(cy + dy - _SPRITE_H / 2)
        return min(max(0, x), self.width - _SPRITE_W), min(max(0, y), self.height - _SPRITE_H)

    def _step_layer(self, step: StepScript, stage: int) -> np.ndarray:
        top = _STAGE_COLOURS[stage % len(_STAGE_COLOURS)]
        layer = _gradient(self.width, self.height, top)
        bench = int(self.height * 0.80)
        layer[bench:] = (112, 88, 66)
        # The material as a vessel of its own colour standing on the bench.
        vessel = _TOOL_COLOURS[zlib.crc32(step.material.encode()) % len(_TOOL_COLOURS)]
        vx, vw, vh = int(self.width * 0.30), self.width // 10, self.height // 6
        layer[bench - vh : bench, vx : vx + vw] = vessel
        image = Image.fromarray(layer)
        draw = ImageDraw.Draw(image)
        y = code_band_height(self.height) + 14
        for text, size, colour in (
            (step.tool, 15, (255, 255, 255)),
            (step.material, 12, (190, 235, 255)),
            (step.quantity, 14, (255, 222, 89)),
            (step.operation, 11, (215, 215, 215)),
        ):
            font = _fit(draw, text, size, self.width - 12)
            draw.text((6, y), text.translate(_DRAWABLE), font=font, fill=colour)
            y += size + 3
        return np.asarray(image, dtype=np.uint8).copy()

    def _slide_layer(self, script: ExperimentScript) -> np.ndarray:
        image = Image.new("RGB", (self.width, self.height), (236, 236, 230))
        draw = ImageDraw.Draw(image)
        y = code_band_height(self.height) + 14
        draw.text((6, y), "Results", font=_font(16), fill=(20, 40, 110))
        y += 21
        for line in script.slide:
            for wrapped in _wrap(draw, line.translate(_DRAWABLE), _font(11), self.width - 12):
                draw.text((6, y), wrapped, font=_font(11), fill=(30, 30, 30))
                y += 14
        return np.asarray(image, dtype=np.uint8).copy()


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _fit(
    draw: ImageDraw.ImageDraw, text: str, size: int, width: int
) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """The largest font up to `size` at which `text` fits in `width` pixels (minimum 8 px)."""
    text = text.translate(_DRAWABLE)
    while size > 8 and draw.textlength(text, font=_font(size)) > width:
        size -= 1
    return _font(size)


def _wrap(
    draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont | ImageFont.ImageFont, width: int
) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and draw.textlength(candidate, font=font) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    return [*lines, current] if current else lines


def _gradient(width: int, height: int, top: tuple[int, int, int]) -> np.ndarray:
    shade = np.linspace(1.0, 0.55, height, dtype=np.float32)[:, None, None]
    layer = (np.asarray(top, dtype=np.float32)[None, None, :] * shade).astype(np.uint8)
    return np.ascontiguousarray(np.broadcast_to(layer, (height, width, 3)))


def _pick(choices: tuple[str, ...], key: str) -> str:
    """A stable choice by name (crc32, not `hash`, which is salted per process)."""
    return choices[zlib.crc32(key.encode()) % len(choices)]


@cache
def _sprite(tool: str) -> Sprite:
    """A tool's look: one of six shapes in one of eight colours, fixed by its name."""
    shape = _pick(_SHAPES, tool)
    colour = _TOOL_COLOURS[zlib.crc32(tool.encode()[::-1]) % len(_TOOL_COLOURS)]
    ys, xs = np.mgrid[0:_SPRITE_H, 0:_SPRITE_W].astype(np.float32)
    cx, cy = (_SPRITE_W - 1) / 2, (_SPRITE_H - 1) / 2
    if shape == "pipette":
        mask = (np.abs(xs - cx) <= 2) | ((ys < 9) & (np.abs(xs - cx) <= 6))
    elif shape == "disc":
        mask = (xs - cx) ** 2 + (ys - cy) ** 2 <= 10.5**2
    elif shape == "flask":
        mask = (np.abs(xs - cx) <= 3 + (ys / _SPRITE_H) * 8) & (ys > 2)
    elif shape == "box":
        inner = (np.abs(xs - cx) < 6) & (np.abs(ys - cy) < 10)
        mask = (np.abs(xs - cx) <= 10) & (np.abs(ys - cy) <= 14) & ~inner
    elif shape == "diamond":
        mask = np.abs(xs - cx) / 11 + np.abs(ys - cy) / 15 <= 1
    else:  # cross
        mask = (np.abs(xs - cx) <= 3) | (np.abs(ys - cy) <= 3)
    rgb = np.empty((_SPRITE_H, _SPRITE_W, 3), dtype=np.uint8)
    rgb[...] = colour
    return rgb, mask[:, :, None]
