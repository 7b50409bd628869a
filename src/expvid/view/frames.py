"""The frames a model was sent, recovered without writing anything anywhere.

A prediction records which frames were sent (index and time), not their pixels. The pixels come
from the run's frame cache when its entry is still there ("cache"), or are decoded again with the
run's recorded sampler settings ("resampled", and the page says so). Either way the recovered
indices are compared with the recorded ones: a difference means the video changed after the run,
and is shown, never hidden.

The cache is opened through `ReadOnlyFrameCache`: it reads entries and remembered file hashes but
never stores, repairs or deletes (the viewer must not disturb a cache that a run may be using).
"""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from expvid.media.cache import CacheEntry, FrameCache, _parse
from expvid.media.errors import MediaError
from expvid.media.sampler import sample_with_settings
from expvid.schema import FrameRef, ImagesRef, Item, Prediction, SamplerSettings, VideoRef

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


class ReadOnlyFrameCache(FrameCache):
    """A `FrameCache` that never writes: no stored entries, no remembered hashes, no repairs."""

    def load(self, key: str) -> CacheEntry | None:
        try:
            data = self.entry_path(key).read_bytes()
        except OSError:
            return None
        return _parse(data)  # a damaged entry is a miss; unlike FrameCache.load, it stays on disk

    def _write_atomic(self, target: Path, data: bytes) -> bool:
        return False


@dataclass(frozen=True)
class FrameImage:
    index: int | None  # frame index in the video (None for an image file)
    time: float | None
    data: bytes
    mime: str
    label: str = ""


@dataclass(frozen=True)
class FrameSet:
    """The frames of one prediction and where they came from."""

    #: "cache" | "resampled" | "images" | "none" | "unavailable"
    source: str
    note: str
    frames: list[FrameImage] = field(default_factory=list)
    recorded: list[FrameRef] = field(default_factory=list)

    @property
    def mismatch(self) -> bool:
        """The recovered frames are not the recorded ones (the video changed since the run)."""
        if not self.recorded or self.source not in ("cache", "resampled"):
            return False
        return [f.index for f in self.frames] != [r.index for r in self.recorded]


def confined(root: Path | None, path: str | os.PathLike[str]) -> Path | None:
    """`path` when it lies inside `root` (after normalising `..`), else None.

    Symlinks inside the dataset are the dataset owner's and are followed; a path written in an
    annotation file that climbs out of the dataset root is refused.
    """
    if root is None:
        return None
    base = os.path.normpath(os.path.abspath(root))
    full = os.path.normpath(os.path.abspath(os.path.join(base, path)))
    if os.path.commonpath([base, full]) != base:
        return None
    return Path(full)


class FrameResolver:
    """Recovers frame sets, remembering the most recent ones (thread-safe)."""

    def __init__(self, capacity: int = 48) -> None:
        self.capacity = capacity
        self._memo: OrderedDict[tuple[object, ...], FrameSet] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[tuple[object, ...], threading.Lock] = {}

    def resolve(
        self,
        item: Item,
        prediction: Prediction | None,
        settings: SamplerSettings | None,
        *,
        dataset_root: Path | None,
        cache_root: Path | None,
    ) -> FrameSet:
        recorded = list(prediction.frames) if prediction is not None else []
        media = item.media
        if media is None:
            return FrameSet("none", "this item has no video or images", recorded=recorded)
        if prediction is not None and not recorded and prediction.n_images == 0:
            if prediction.error is not None:
                return FrameSet("none", f"no frames were sent: {prediction.error}", recorded=recorded)
            if isinstance(media, VideoRef):
                return FrameSet("none", "no frames were sent (the model was asked without images)")
        if isinstance(media, ImagesRef):
            return self._images(media, dataset_root, recorded)
        key = (media.path, media.start, media.end, settings and settings.model_dump_json(), str(cache_root))
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return _with_recorded(self._memo[key], recorded)
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # two requests for the same frames decode once
            with self._lock:
                found = self._memo.get(key)
            if found is None:
                found = self._video(media, settings, dataset_root, cache_root)
                with self._lock:
                    self._memo[key] = found
                    while len(self._memo) > self.capacity:
                        self._memo.popitem(last=False)
        return _with_recorded(found, recorded)

    def _video(
        self, media: VideoRef, settings: SamplerSettings | None, root: Path | None, cache_root: Path | None
    ) -> FrameSet:
        if settings is None:
            return FrameSet("unavailable", "the run recorded no sampler settings for this item")
        path = confined(root, media.path)
        if path is None:
            return FrameSet("unavailable", f"video {media.path} lies outside the dataset root")
        if not path.is_file():
            return FrameSet("unavailable", f"video not found: {path}")
        usable = cache_root is not None and cache_root.is_dir()
        cache: ReadOnlyFrameCache | bool = ReadOnlyFrameCache(cache_root) if usable and cache_root else False
        try:
            sampled = sample_with_settings(
                path, settings, start=media.start, end=media.end, cache=cache, workers=1
            )
        except (MediaError, OSError) as error:
            return FrameSet("unavailable", f"cannot sample the video: {error}")
        frames = [
            FrameImage(frame.index, frame.time, frame.data, frame.mime, f"#{frame.index} @ {frame.time:.2f}s")
            for frame in sampled.frames
        ]
        if sampled.from_cache:
            return FrameSet("cache", f"from the run's frame cache ({cache_root})", frames)
        if cache_root is None:
            why = "the run used no frame cache"
        elif not usable:
            why = f"the frame cache directory is gone ({cache_root})"
        else:
            why = f"the frame cache holds no entry for these frames ({cache_root})"
        return FrameSet("resampled", f"re-sampled now with the recorded settings: {why}", frames)

    def _images(self, media: ImagesRef, root: Path | None, recorded: list[FrameRef]) -> FrameSet:
        frames = []
        for position, name in enumerate(media.paths):
            path = confined(root, name)
            if path is None or not path.is_file():
                return FrameSet(
                    "unavailable", f"image not found inside the dataset: {name}", recorded=recorded
                )
            mime = IMAGE_TYPES.get(path.suffix.lower(), "application/octet-stream")
            frames.append(
                FrameImage(None, None, path.read_bytes(), mime, f"image {position + 1}: {path.name}")
            )
        return FrameSet("images", "the item's images, as read from the dataset", frames, recorded)


def _with_recorded(found: FrameSet, recorded: list[FrameRef]) -> FrameSet:
    return FrameSet(found.source, found.note, found.frames, recorded)


def thumbnail(data: bytes, max_side: int, quality: int = 70) -> bytes:
    """A small JPEG of an image (for the static export); the original when it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as opened:
            image = opened.convert("RGB")
        image.thumbnail((max_side, max_side))
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=quality, optimize=True)
        return out.getvalue()
    except (UnidentifiedImageError, OSError, ValueError):
        return data
