"""Turn decoded frames into what a model gets: display orientation, target size, JPEG/PNG bytes.

Why here and like this: scaling and the YUV->RGB conversion happen in one `sws_scale` call straight
from the decoder's frame, so a full-resolution RGB copy (2.7 MB per 720p frame, 708 MB for 256)
never exists. The scaler is kept per thread: `frame.reformat` sets one up for every frame, which
cost 0.1 of the 0.7 ms per 720p frame (benchmarks/sampling_profile.py). Rotation is applied afterwards on the small image (PyAV reports
`frame.rotation` but does not apply it; the convention is display = np.rot90(stored, k=rotation // 90)).
"""

from __future__ import annotations

import io
import threading
from typing import Literal

import av
import numpy as np
from av.video.reformatter import VideoReformatter
from PIL import Image

from expvid.media.errors import SamplingError

ImageFormat = Literal["jpeg", "png"]
IMAGE_FORMATS: tuple[ImageFormat, ...] = ("jpeg", "png")
MIME_TYPES: dict[str, str] = {"jpeg": "image/jpeg", "png": "image/png"}

#: swscale's area-averaging filter: the right filter for the large downscales (720p -> 224) we do.
INTERPOLATION = "AREA"


def output_size(width: int, height: int, *, size: int | None, max_side: int | None) -> tuple[int, int]:
    """(width, height) of the output image for a display-size `width` x `height` frame.

    `max_side` keeps the aspect ratio with the longer side at most `max_side` (never upscales);
    otherwise `size` squashes to a `size` x `size` square (ExpVid appendix F.2: 224x224);
    with neither, the display size is kept.
    """
    if max_side is not None:
        if max_side < 1:
            raise SamplingError(None, f"max_side must be >= 1, got {max_side}")
        scale = min(1.0, max_side / max(width, height))
        return max(1, round(width * scale)), max(1, round(height * scale))
    if size is not None:
        if size < 1:
            raise SamplingError(None, f"size must be >= 1, got {size}")
        return size, size
    return width, height


_scalers = threading.local()


def _scaler() -> VideoReformatter:
    """This thread's scaler (a `VideoReformatter` is not safe to share between threads)."""
    scaler: VideoReformatter | None = getattr(_scalers, "scaler", None)
    if scaler is None:
        scaler = _scalers.scaler = VideoReformatter()
    return scaler


def frame_to_rgb(frame: av.VideoFrame, width: int, height: int, *, threads: int = 1) -> np.ndarray:
    """The frame as a display-oriented `height` x `width` x 3 uint8 RGB array.

    `width`/`height` are display sizes; for a 90/270 degree rotation the stored picture is scaled
    to the transposed size first and then rotated, so nothing is scaled twice.
    """
    rotation = int(frame.rotation or 0) % 360
    stored_w, stored_h = (height, width) if rotation in (90, 270) else (width, height)
    rgb: np.ndarray
    if (stored_w, stored_h) == (frame.width, frame.height) and frame.format.name == "rgb24":
        rgb = frame.to_ndarray()
    else:
        rgb = (
            _scaler()
            .reformat(
                frame,
                width=stored_w,
                height=stored_h,
                format="rgb24",
                interpolation=INTERPOLATION,
                threads=threads,
            )
            .to_ndarray()
        )
    if rotation:
        rgb = np.ascontiguousarray(np.rot90(rgb, k=rotation // 90))
    return rgb


def encode_image(rgb: np.ndarray, image_format: str, *, quality: int = 90) -> bytes:
    """JPEG (with `quality`) or lossless PNG bytes of an RGB uint8 array."""
    buffer = io.BytesIO()
    image = Image.fromarray(rgb)
    if image_format == "jpeg":
        image.save(buffer, format="JPEG", quality=quality)
    elif image_format == "png":
        image.save(buffer, format="PNG", compress_level=3)
    else:
        raise SamplingError(None, f"image_format must be one of {IMAGE_FORMATS}, got {image_format!r}")
    return buffer.getvalue()


def decode_image(data: bytes) -> np.ndarray:
    """RGB uint8 array of encoded image bytes (the inverse of `encode_image`, for checks and tools)."""
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))
