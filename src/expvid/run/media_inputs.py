"""Turning an item's media into the images a model is sent, once, the same way for every model.

Video frames are sampled by `expvid.media` (frame-exact, cached by content) in worker threads so
that decoding overlaps with requests in flight; image lists are read from disk. Every image
is paired with what it is (frame index and time, or file position) so predictions can log it.
"""

from __future__ import annotations

import asyncio
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path

from expvid.media.cache import FrameCache
from expvid.media.sampler import SampledVideo, cached_sample_with_settings, sample_with_settings
from expvid.models.types import ImagePart
from expvid.schema import FrameRef, ImagesRef, Item, SamplerSettings, VideoRef


@dataclass
class PreparedMedia:
    images: list[ImagePart] = field(default_factory=list)
    frames: list[FrameRef] = field(default_factory=list)
    from_cache: bool = False


class MediaPreparer:
    """Samples frames for items with a bounded number of decoding threads."""

    def __init__(self, cache: FrameCache | None, workers: int = 2) -> None:
        self.cache = cache
        self._slots = asyncio.Semaphore(workers)

    async def prepare(self, item: Item, settings: SamplerSettings | None) -> PreparedMedia:
        media = item.media
        if media is None:
            return PreparedMedia()
        if isinstance(media, VideoRef) and settings is not None and self.cache is not None:
            # A frame-cache hit is a few stats and one small read: answered here, without a thread.
            hit = cached_sample_with_settings(
                media.path, settings, cache=self.cache, start=media.start, end=media.end
            )
            if hit is not None:
                return _prepared(hit)
        async with self._slots:
            if isinstance(media, VideoRef):
                if settings is None:
                    raise ValueError(f"item {item.id}: the suite gave no sampler for its video")
                return await asyncio.to_thread(self._video, media, settings)
            return await asyncio.to_thread(_images, media)

    def _video(self, media: VideoRef, settings: SamplerSettings) -> PreparedMedia:
        sampled = sample_with_settings(
            media.path,
            settings,
            start=media.start,
            end=media.end,
            cache=self.cache if self.cache is not None else False,
            workers=1,  # the runner decodes several items at once: one decoder thread each
        )
        return _prepared(sampled)


def _prepared(sampled: SampledVideo) -> PreparedMedia:
    return PreparedMedia(
        images=[ImagePart(data=frame.data, mime=frame.mime) for frame in sampled.frames],
        frames=sampled.frame_refs(),
        from_cache=sampled.from_cache,
    )


def _images(media: ImagesRef) -> PreparedMedia:
    images = []
    for path in media.paths:
        data = Path(path).read_bytes()
        mime = mimetypes.guess_type(path)[0] or "image/png"
        images.append(ImagePart(data=data, mime=mime))
    return PreparedMedia(images=images)
