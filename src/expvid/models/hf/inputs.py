"""From a `GenerateRequest` to what a transformers processor takes: chat turns plus decoded pictures.

The harness's frames arrive as JPEG bytes in time order. They are decoded here and handed to the
processor as they are: never re-sampled, never re-ordered. Each run of consecutive images in a
message becomes either ONE video (a `{"type": "video"}` turn part) or one image part per frame,
so the model's own chat template places the vision tokens where the message had the pictures.

Frames count as a video when the request's input mode says so (`input_mode="video"`: the run's
`--input-mode video`, set by the runner only for frames sampled from a video; image lists such as
a suite's figures stay images), or when a library caller forces one form with `frames_as`. The frame
times in the metadata (`frame_times_s`) give the frame rate that Qwen2.5-VL turns into absolute
time positions.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Literal

from PIL import Image, UnidentifiedImageError

from expvid.models.types import BackendError, GenerateRequest, ImagePart, TextPart
from expvid.schema import ErrorKind

#: Metadata key the runner fills with the sampled frames' times (seconds) for video items.
FRAME_TIMES_KEY = "frame_times_s"

FramesAs = Literal["auto", "video", "images"]


@dataclass
class Visuals:
    """A request's chat turns and pictures, in the order their placeholders appear."""

    conversation: list[dict[str, Any]]
    images: list[Image.Image] = field(default_factory=list)
    videos: list[list[Image.Image]] = field(default_factory=list)
    video_fps: list[float] = field(default_factory=list)


def decode_image(part: ImagePart, where: str) -> Image.Image:
    try:
        with Image.open(io.BytesIO(part.data)) as opened:
            return opened.convert("RGB")
    except (UnidentifiedImageError, OSError) as error:
        raise BackendError(f"{where}: an image does not decode ({error})", kind=ErrorKind.OTHER) from None


def frames_as_video(request: GenerateRequest, frames_as: FramesAs) -> bool:
    if frames_as == "auto":
        return request.input_mode == "video"
    return frames_as == "video"


def frame_rate(request: GenerateRequest, n_frames: int, default_fps: float) -> float:
    """Frames per second of the sampled frames, from their times when the request carries them."""
    times = request.metadata.get(FRAME_TIMES_KEY)
    if isinstance(times, list) and len(times) == n_frames and n_frames >= 2:
        try:
            span = float(times[-1]) - float(times[0])
        except (TypeError, ValueError):
            return default_fps
        if span > 0:
            return (n_frames - 1) / span
    return default_fps


def build_visuals(
    request: GenerateRequest, *, frames_as: FramesAs, default_fps: float, where: str
) -> Visuals:
    as_video = frames_as_video(request, frames_as)
    visuals = Visuals(conversation=[])
    for message in request.messages:
        content: list[dict[str, Any]] = []
        run: list[Image.Image] = []

        def flush(run: list[Image.Image] = run, content: list[dict[str, Any]] = content) -> None:
            if not run:
                return
            if as_video:
                content.append({"type": "video"})
                visuals.videos.append(list(run))
                visuals.video_fps.append(frame_rate(request, len(run), default_fps))
            else:
                content.extend({"type": "image"} for _ in run)
                visuals.images.extend(run)
            run.clear()

        for part in message.content:
            if isinstance(part, ImagePart):
                run.append(decode_image(part, where))
            elif isinstance(part, TextPart):
                flush()
                content.append({"type": "text", "text": part.text})
        flush()
        visuals.conversation.append({"role": message.role, "content": content})
    return visuals
