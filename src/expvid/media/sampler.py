"""Public sampling API: which frames a model sees, exactly, cheaply, and logged.

`sample_video` returns encoded images (JPEG/PNG bytes, what API models get); `sample_video_arrays`
returns RGB arrays (for in-process models). Both return the video's `VideoInfo`, the window, and
for every frame its presentation index, its pts time and the target time it was chosen for, so a
run can log exactly what was sent. Frame choice, decoding and caching are in `plan`, `decode` and
`cache`; this module validates the request, wires them together and keeps results in target order.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, Unpack

import av
import numpy as np

from expvid.media.cache import CacheEntry, FrameCache
from expvid.media.container import check_file
from expvid.media.decode import DecodeStats, decode_frames
from expvid.media.errors import MediaError, SamplingError
from expvid.media.index import load_index
from expvid.media.info import VideoInfo
from expvid.media.plan import FramePlan, FrameRequest, Spacing, Thinning
from expvid.media.transform import (
    IMAGE_FORMATS,
    INTERPOLATION,
    MIME_TYPES,
    encode_image,
    frame_to_rgb,
    output_size,
)

if TYPE_CHECKING:  # the schema (pydantic models) is imported where records are made
    from expvid.schema import FrameRef, SamplerSettings


class _Located(Protocol):
    @property
    def index(self) -> int: ...

    @property
    def time(self) -> float: ...

    def to_ref(self) -> FrameRef: ...


P = TypeVar("P", bound=_Located)

#: `cache=` accepts a FrameCache, True (the default cache directory) or False (no caching).
CacheOption = FrameCache | bool


class CacheMiss(Exception):
    """`cache_only=True` and the frames are not in the cache (nothing was hashed or decoded)."""


@dataclass(frozen=True, slots=True)
class SampledFrame:
    """One encoded frame: which frame it is (`index`, `time`), why (`target`), and its bytes."""

    index: int  # position in presentation order from the stream start
    time: float  # the frame's pts in seconds, from the timeline's origin (`VideoInfo.timeline_origin`)
    target: float  # the time it was chosen for (index is the frame on screen at `target`)
    width: int
    height: int
    data: bytes
    mime: str

    def to_ref(self) -> FrameRef:
        from expvid.schema import FrameRef

        return FrameRef(index=self.index, time=self.time)

    def file_name(self, position: int) -> str:
        """`frame_0003_idx000123.jpg`: position in the sample, then frame index."""
        suffix = ".png" if self.mime == "image/png" else ".jpg"
        return f"frame_{position:04d}_idx{self.index:06d}{suffix}"


@dataclass(frozen=True, slots=True)
class FrameArray:
    """One frame as a display-oriented RGB uint8 array of shape (height, width, 3).

    The array is read-only (it views the frame's bytes, shared with the cache entry); copy it
    before changing it in place.
    """

    index: int
    time: float
    target: float
    image: np.ndarray

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])

    def to_ref(self) -> FrameRef:
        from expvid.schema import FrameRef

        return FrameRef(index=self.index, time=self.time)


@dataclass(frozen=True)
class _Sample(Generic[P]):
    info: VideoInfo
    plan: FramePlan
    window: tuple[float, float]
    frames: list[P]
    stats: DecodeStats = field(default_factory=DecodeStats)
    from_cache: bool = False

    def frame_refs(self) -> list[FrameRef]:
        """(index, time) of every frame, in order: what a run logs per prediction."""
        return [frame.to_ref() for frame in self.frames]


@dataclass(frozen=True)
class SampledVideo(_Sample[SampledFrame]):
    """Encoded frames of one video, in target order, with the video's info and the decode cost."""

    image_format: str = "jpeg"

    def save(self, directory: str | os.PathLike[str]) -> list[Path]:
        """Write every frame to `directory` (created) as frame_NNNN_idxNNNNNN.jpg|png."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for position, frame in enumerate(self.frames):
            path = out / frame.file_name(position)
            path.write_bytes(frame.data)
            paths.append(path)
        return paths

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no image bytes): what `expvid frames` prints."""
        return {
            "video": self.info.to_dict(),
            "request": self.plan.describe(),
            "window": {"start": self.window[0], "end": self.window[1]},
            "image_format": self.image_format,
            "frames": [
                {
                    "index": frame.index,
                    "time": frame.time,
                    "target": frame.target,
                    "width": frame.width,
                    "height": frame.height,
                    "bytes": len(frame.data),
                }
                for frame in self.frames
            ],
            "from_cache": self.from_cache,
            "decode_stats": self.stats.to_dict(),
        }


@dataclass(frozen=True)
class SampledArrays(_Sample[FrameArray]):
    """RGB frames of one video, in target order, with the video's info and the decode cost."""

    def stack(self) -> np.ndarray:
        """All frames as one (N, H, W, 3) array (they share a size: one output size per call)."""
        return np.stack([frame.image for frame in self.frames])


def probe(path: str | os.PathLike[str]) -> VideoInfo:
    """Facts about the video at `path`, measured from its packets (one demux pass, remembered)."""
    return replace(load_index(path).info, path=str(path))


def sample_video(
    path: str | os.PathLike[str],
    *,
    size: int | None = 224,
    max_side: int | None = None,
    image_format: str = "jpeg",
    quality: int = 90,
    cache: CacheOption = True,
    workers: int | None = None,
    cache_only: bool = False,
    **request: Unpack[FrameRequest],
) -> SampledVideo:
    """Sample frames of a video as encoded images.

    Choose frames (the `FrameRequest` keywords) with exactly one of: `num_frames` (midpoints of N
    equal segments of the window, or with `spacing="linspace"` N frame positions spread from the
    first to the last frame), `fps` (+ `max_frames` cap, `thinning` "uniform" or "keep_last"), or
    explicit `times`. The
    window [`start`, `end`] defaults to the whole video; outside the video is an error. Times are
    seconds from the video's time 0 as a player counts it (`media.timeline`: the first timestamp of
    an MPEG-TS, else the timeline's zero), and frame times are reported the same way.
    Output: `size` x `size` (squash, default 224), or aspect kept with `max_side` (takes precedence),
    or both None for the display size. `cache`: a `FrameCache`, True (default directory,
    `$EXPVID_CACHE_DIR` or ~/.cache/expvid) or False. `workers`: decoders run in parallel on this
    video (default: usable cores, at most 2; pass 1 when sampling many videos concurrently).
    Raises `MediaError` subclasses naming the file. Blocking: call it via `asyncio.to_thread`
    from async code.
    """
    plan = _plan(path, request)
    _check_output(path, size, max_side, image_format, quality)
    output = {"size": size, "max_side": max_side, "format": image_format, "quality": quality}
    mime = MIME_TYPES[image_format]

    def convert(frame: av.VideoFrame, width: int, height: int) -> bytes:
        return encode_image(frame_to_rgb(frame, width, height), image_format, quality=quality)

    def make(meta: dict[str, Any], blob: bytes) -> SampledFrame:
        return SampledFrame(
            index=meta["index"],
            time=meta["time"],
            target=meta["target"],
            width=meta["width"],
            height=meta["height"],
            data=blob,
            mime=mime,
        )

    info, window, frames, stats, hit = _run(
        path, plan, output, size, max_side, cache, workers, convert, make, cache_only=cache_only
    )
    return SampledVideo(info, plan, window, frames, stats, hit, image_format=image_format)


def sample_video_arrays(
    path: str | os.PathLike[str],
    *,
    size: int | None = 224,
    max_side: int | None = None,
    cache: CacheOption = True,
    workers: int | None = None,
    **request: Unpack[FrameRequest],
) -> SampledArrays:
    """Like `sample_video`, but frames are RGB uint8 arrays (cached uncompressed)."""
    plan = _plan(path, request)
    _check_output(path, size, max_side, "jpeg", 90)
    output = {"size": size, "max_side": max_side, "format": "rgb24"}

    def convert(frame: av.VideoFrame, width: int, height: int) -> bytes:
        return frame_to_rgb(frame, width, height).tobytes()

    def make(meta: dict[str, Any], blob: bytes) -> FrameArray:
        shape = (meta["height"], meta["width"], 3)
        image = np.frombuffer(blob, dtype=np.uint8).reshape(shape)
        return FrameArray(index=meta["index"], time=meta["time"], target=meta["target"], image=image)

    info, window, frames, stats, hit = _run(path, plan, output, size, max_side, cache, workers, convert, make)
    return SampledArrays(info, plan, window, frames, stats, hit)


def sample_with_settings(
    path: str | os.PathLike[str],
    settings: SamplerSettings,
    *,
    start: float | None = None,
    end: float | None = None,
    cache: CacheOption = True,
    workers: int | None = None,
    cache_only: bool = False,
) -> SampledVideo:
    """`sample_video` driven by a run's `SamplerSettings` (uniform | linspace | fps | fps_keep_last)."""
    if settings.strategy in ("uniform", "linspace"):
        spacing: Spacing = "linspace" if settings.strategy == "linspace" else "midpoints"
        request: FrameRequest = {"num_frames": settings.num_frames, "spacing": spacing}
    elif settings.strategy in ("fps", "fps_keep_last"):
        thinning: Thinning = "keep_last" if settings.strategy == "fps_keep_last" else "uniform"
        request = {"fps": settings.fps, "max_frames": settings.max_frames, "thinning": thinning}
    else:
        raise SamplingError(path, f"unknown sampler strategy {settings.strategy!r}")
    request.update({"start": start, "end": end})
    return sample_video(
        path,
        size=settings.size,
        max_side=settings.max_side,
        image_format=settings.image_format,
        quality=settings.jpeg_quality,
        cache=cache,
        workers=workers,
        cache_only=cache_only,
        **request,
    )


def cached_sample_with_settings(
    path: str | os.PathLike[str],
    settings: SamplerSettings,
    *,
    cache: FrameCache,
    start: float | None = None,
    end: float | None = None,
) -> SampledVideo | None:
    """The frames `sample_with_settings` would return, if they are in `cache` (and the file's hash is
    already known), else None: a few stats and one small read, cheap enough for an event loop, so a
    run's cache hits need no worker thread."""
    try:
        return sample_with_settings(path, settings, start=start, end=end, cache=cache, cache_only=True)
    except CacheMiss:
        return None


# -- internals --------------------------------------------------------------------------------


def _plan(path: str | os.PathLike[str], request: FrameRequest) -> FramePlan:
    try:
        return FramePlan.build(**request)
    except MediaError as error:
        raise error.for_path(path) from None


def _check_output(
    path: str | os.PathLike[str], size: int | None, max_side: int | None, image_format: str, quality: int
) -> None:
    if size is not None and size < 1:
        raise SamplingError(path, f"size must be >= 1, got {size}")
    if max_side is not None and max_side < 1:
        raise SamplingError(path, f"max_side must be >= 1, got {max_side}")
    if image_format not in IMAGE_FORMATS:
        raise SamplingError(path, f"image_format must be one of {IMAGE_FORMATS}, got {image_format!r}")
    if not 1 <= quality <= 100:
        raise SamplingError(path, f"quality must be in 1..100, got {quality}")


def _resolve_cache(cache: CacheOption) -> FrameCache | None:
    if isinstance(cache, FrameCache):
        return cache
    return FrameCache() if cache else None


def _run(
    path: str | os.PathLike[str],
    plan: FramePlan,
    output: dict[str, Any],
    size: int | None,
    max_side: int | None,
    cache_option: CacheOption,
    workers: int | None,
    convert: Callable[[av.VideoFrame, int, int], bytes],
    make: Callable[[dict[str, Any], bytes], P],
    *,
    cache_only: bool = False,
) -> tuple[VideoInfo, tuple[float, float], list[P], DecodeStats, bool]:
    """Cache lookup, else index -> targets -> decode -> cache store. Frames in target order.
    `cache_only`: the lookup alone, with the file's hash only if already known (`CacheMiss` else)."""
    file = check_file(path)
    cache = _resolve_cache(cache_option)
    key = None
    if cache_only and cache is None:
        raise CacheMiss(file)
    if cache is not None:
        content = cache.known_content_hash(file) if cache_only else cache.content_hash(file)
        if content is None:
            raise CacheMiss(file)
        key = cache.key(content, {"plan": plan.describe(), "output": output, "filter": INTERPOLATION})
        entry = cache.load(key)
        if entry is not None:
            try:
                meta = entry.meta
                info = VideoInfo.from_dict({**meta["info"], "path": str(file)})
                window = (float(meta["window"][0]), float(meta["window"][1]))
                frames = [make(frame, blob) for frame, blob in zip(meta["frames"], entry.blobs, strict=True)]
                return info, window, frames, DecodeStats(), True
            except (KeyError, TypeError, ValueError):
                pass  # an entry from another layout: decode and overwrite it
    if cache_only:
        raise CacheMiss(file)

    index = load_index(file)
    info = replace(index.info, path=str(file))  # the index may be shared with another path to the file
    # The request's times count from the timeline's origin (the first timestamp of a running-clock
    # format such as MPEG-TS, else 0); a window may start up to one frame before the first frame.
    origin = info.timeline_origin
    lead = float(index.frame_times[1] - index.frame_times[0]) if info.num_frames > 1 else info.duration
    try:
        start, end = plan.window(info.start, info.end, origin=origin, lead=lead)
        frame_times = index.frame_times.tolist() if plan.spacing == "linspace" else None
        targets = plan.targets(info.start, info.end, frame_times, origin=origin, lead=lead)
    except MediaError as error:
        raise error.for_path(file) from None
    window = (start - origin, end - origin)
    chosen = [int(i) for i in index.frames_at(targets)]
    width, height = output_size(info.width, info.height, size=size, max_side=max_side)
    result = decode_frames(file, index, chosen, lambda frame: convert(frame, width, height), workers=workers)
    metas = [
        {
            "index": frame,
            "time": index.frame_time(frame) - origin,
            "target": float(target) - origin,
            "width": width,
            "height": height,
        }
        for frame, target in zip(chosen, targets, strict=True)
    ]
    blobs = [result.frames[frame] for frame in chosen]
    if cache is not None and key is not None:
        meta = {"info": info.to_dict(), "window": list(window), "frames": metas}
        cache.store(key, CacheEntry(meta=meta, blobs=blobs))
    frames = [make(meta, blob) for meta, blob in zip(metas, blobs, strict=True)]
    return info, window, frames, result.stats, False
