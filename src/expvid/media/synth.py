"""Synthetic test video: frames that carry their own frame number, and a small PyAV writer.

Why: frame-exact sampling can only be tested if every decoded frame says which frame it is. Each
frame gets a machine-readable band (a row of black/white cells encoding the number with a checksum)
that survives a 224x224 resize and JPEG, plus the number in digits for people looking at it.
The band is drawn in display orientation, so a reader that forgets to apply a file's rotation fails
to read it instead of returning a wrong number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

#: Cells: start marker (white), 18 value bits, 6 checksum bits, end marker (black).
_VALUE_BITS = 18
_CHECK_BITS = 6
_CELLS = 1 + _VALUE_BITS + _CHECK_BITS + 1
MAX_CODE = (1 << _VALUE_BITS) - 1

# 3x5 bitmap digits, one string per row.
_DIGITS = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "001", "001", "001"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
}


class FrameCodeError(ValueError):
    """The image does not carry a readable frame code (wrong orientation, wrong frame, damage)."""


def _checksum(value: int) -> int:
    return ((value * 0x9E3779B1) >> 20) & ((1 << _CHECK_BITS) - 1)


def code_band_height(height: int) -> int:
    """Rows at the top of the frame reserved for the code band."""
    return max(8, height // 8)


def draw_frame_code(image: np.ndarray, value: int) -> None:
    """Draw `value` into the top band of an RGB uint8 image (in place), plus digits below it."""
    if not 0 <= value <= MAX_CODE:
        raise ValueError(f"frame code {value} outside 0..{MAX_CODE}")
    height, width = image.shape[:2]
    band = code_band_height(height)
    bits = [1]
    bits += [(value >> i) & 1 for i in range(_VALUE_BITS)]
    bits += [(_checksum(value) >> i) & 1 for i in range(_CHECK_BITS)]
    bits += [0]
    edges = np.linspace(0, width, _CELLS + 1).round().astype(int)
    for cell, bit in enumerate(bits):
        image[:band, edges[cell] : edges[cell + 1]] = 255 if bit else 0
    _draw_digits(image, str(value), top=band + 2, scale=max(1, height // 60))


def _draw_digits(image: np.ndarray, text: str, top: int, scale: int) -> None:
    height, width = image.shape[:2]
    left = 2
    for char in text:
        glyph = _DIGITS[char]
        for row, pattern in enumerate(glyph):
            for col, on in enumerate(pattern):
                y0, x0 = top + row * scale, left + col * scale
                if y0 + scale > height or x0 + scale > width:
                    return
                image[y0 : y0 + scale, x0 : x0 + scale] = 255 if on == "1" else 32
        left += 4 * scale


def read_frame_code(image: np.ndarray) -> int:
    """Read the number drawn by `draw_frame_code` from an RGB (or grey) image of any size.

    Raises `FrameCodeError` when the markers or the checksum do not match, so a test can never
    mistake a rotated or garbled frame for a valid one.
    """
    grey = image.mean(axis=2) if image.ndim == 3 else image.astype(float)
    height, width = grey.shape
    band = code_band_height(height)
    edges = np.linspace(0, width, _CELLS + 1)
    bits = []
    for cell in range(_CELLS):
        x0, x1 = edges[cell], edges[cell + 1]
        margin = (x1 - x0) * 0.3
        xs = slice(int(np.ceil(x0 + margin)), max(int(np.ceil(x0 + margin)) + 1, int(np.floor(x1 - margin))))
        ys = slice(int(band * 0.25), max(int(band * 0.25) + 1, int(band * 0.75)))
        bits.append(1 if grey[ys, xs].mean() >= 128 else 0)
    if bits[0] != 1 or bits[-1] != 0:
        raise FrameCodeError("frame code markers not found (wrong orientation or not a coded frame)")
    value = sum(bit << i for i, bit in enumerate(bits[1 : 1 + _VALUE_BITS]))
    check = sum(bit << i for i, bit in enumerate(bits[1 + _VALUE_BITS : -1]))
    if check != _checksum(value):
        raise FrameCodeError(f"frame code checksum mismatch (read {value})")
    return value


def scene_frame(index: int, width: int, height: int, *, seed: int = 0, fps: float = 30.0) -> np.ndarray:
    """A lab-like frame with moderate motion (bench, moving 'pipette', drifting texture), coded."""
    rng_phase = (seed * 0.61803) % 1.0
    t = index / fps
    ys = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None]
    xs = np.linspace(0.0, 1.0, width, dtype=np.float32)[None, :]
    shade = 0.5 + 0.25 * np.sin(6.0 * xs + 0.7 * t + 6.28 * rng_phase) * np.cos(4.0 * ys - 0.3 * t)
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[..., 0] = (150 * shade + 40).astype(np.uint8)
    image[..., 1] = (170 * shade + 30).astype(np.uint8)
    image[..., 2] = (120 * (1 - shade) + 60).astype(np.uint8)
    # Bench surface.
    image[int(height * 0.7) :, :] = (110, 90, 70)
    # A moving vessel and an instrument that dips into it.
    cx = int((0.2 + 0.6 * (0.5 + 0.5 * np.sin(0.4 * t + 6.28 * rng_phase))) * width)
    w, h = max(4, width // 12), max(6, height // 5)
    y0 = int(height * 0.7) - h
    image[y0 : y0 + h, max(0, cx - w // 2) : cx + w // 2] = (60, 140, 220)
    dip = int((0.5 + 0.5 * np.sin(2.0 * t)) * h * 0.8)
    px = min(width - 3, cx + w // 4)
    image[max(0, y0 - h + dip) : y0 + dip, px : px + max(2, width // 120)] = (230, 230, 230)
    draw_frame_code(image, index)
    return image


def write_video(
    path: Path,
    frames: Iterable[np.ndarray],
    *,
    fps: float = 30.0,
    times: Sequence[float] | None = None,
    gop: int | None = None,
    bframes: int = 2,
    rotation: int = 0,
    crf: int = 23,
    preset: str = "veryfast",
    codec: str = "libx264",
    threads: int = 0,
) -> int:
    """Encode RGB frames to a file with PyAV; returns the number of frames written.

    `times` (seconds, increasing) gives each frame its own presentation time for variable frame rate
    files; otherwise frames are spaced 1/fps apart. `gop` fixes the keyframe interval (scene-cut
    keyframes are disabled so the interval is exact). `rotation` (degrees, multiple of 90) is written
    as the stream's display matrix: the stored pixels are the display image rotated back, as a phone
    camera would store them.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = Fraction(fps).limit_denominator(1001)
    written = 0
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=rate)
        assert isinstance(stream, av.VideoStream)
        stream.pix_fmt = "yuv420p"
        if times is not None:
            stream.time_base = Fraction(1, 90000)
            stream.codec_context.time_base = Fraction(1, 90000)
        options: dict[str, object] = {"crf": str(crf), "preset": preset, "bf": str(bframes)}
        params = ["scenecut=0"]
        if gop:
            params += [f"keyint={gop}", f"min-keyint={gop}"]
        options["x264-params"] = ":".join(params)
        if codec == "libx264":
            stream.options = options
        stream.codec_context.thread_count = threads
        if rotation % 360:
            stream.set_display_rotation(rotation % 360)
        for index, image in enumerate(frames):
            stored = np.ascontiguousarray(np.rot90(image, k=-(rotation // 90))) if rotation % 360 else image
            if index == 0:
                stream.height, stream.width = stored.shape[:2]
            frame = av.VideoFrame.from_ndarray(stored, format="rgb24")
            if times is not None:
                frame.pts = round(times[index] * 90000)
                frame.time_base = Fraction(1, 90000)
            else:
                frame.pts = index
                frame.time_base = 1 / rate
            for packet in stream.encode(frame):
                container.mux(packet)
            written += 1
        for packet in stream.encode():
            container.mux(packet)
    return written
