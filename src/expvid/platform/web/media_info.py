"""The frame rate of the video a review page plays, for the keyboard's frame-by-frame stepping.

Read from the container with PyAV (demuxing only the header) and remembered per file version, so a
page view costs one `stat` once the file has been seen.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import av

#: Used when a file does not say (stepping then moves by 1/25 s, a common camera rate).
FALLBACK_FPS = 25.0


@lru_cache(maxsize=1024)
def _rate(path: str, _size: int, _mtime_ns: int) -> float:
    try:
        with av.open(path) as container:
            stream = container.streams.video[0]
            rate = stream.average_rate or stream.guessed_rate or stream.base_rate
            value = float(rate) if rate else 0.0
    except (av.FFmpegError, IndexError, OSError):
        return FALLBACK_FPS
    return value if 1.0 <= value <= 480.0 else FALLBACK_FPS


def frame_rate(path: Path) -> float:
    """Frames per second of the first video stream of `path` (FALLBACK_FPS when unknown)."""
    try:
        stat = os.stat(path)
    except OSError:
        return FALLBACK_FPS
    return _rate(str(path), stat.st_size, stat.st_mtime_ns)
