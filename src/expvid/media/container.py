"""Open a video file with PyAV, turning every way that can fail into a `MediaError` naming the file.

Why one place: callers (index building, decoding workers) must never see a raw `av.FFmpegError`
or `OSError` without the file name, and every container must be closed even on error (PyAV keeps
files open through reference cycles otherwise: "too many open files" after a few thousand videos).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import av
import av.container

from expvid.media.errors import (
    CorruptMediaError,
    EmptyMediaError,
    MediaNotFoundError,
    NotAVideoError,
    TruncatedMediaError,
)


def check_file(path: str | os.PathLike[str]) -> Path:
    """The path as a `Path`, after checking that it is a non-empty regular file."""
    file = Path(path)
    try:
        stat = file.stat()
    except FileNotFoundError:
        raise MediaNotFoundError(file, "no such file") from None
    except OSError as error:
        raise MediaNotFoundError(file, f"cannot access the file: {error.strerror or error}") from None
    if not file.is_file():
        raise MediaNotFoundError(file, "not a regular file")
    if stat.st_size == 0:
        raise EmptyMediaError(file, "the file is empty (0 bytes)")
    return file


def _looks_like_mp4(file: Path) -> bool:
    """ISO media files start with a box whose type is `ftyp` (bytes 4..8)."""
    try:
        with file.open("rb") as handle:
            head = handle.read(12)
    except OSError:
        return False
    return len(head) >= 8 and head[4:8] in (b"ftyp", b"mdat", b"free", b"wide")


@contextmanager
def open_video(path: str | os.PathLike[str]) -> Iterator[tuple[av.container.InputContainer, av.VideoStream]]:
    """Open `path` and yield (container, first video stream); the container is always closed."""
    file = check_file(path)
    try:
        container = av.open(str(file), mode="r")
    except av.FFmpegError as error:
        if _looks_like_mp4(file):
            raise TruncatedMediaError(
                file,
                "MP4 file whose index (moov box) cannot be read: truncated or interrupted copy? "
                f"({_describe(error)})",
            ) from None
        raise NotAVideoError(file, f"not a readable media file ({_describe(error)})") from None
    except OSError as error:
        raise MediaNotFoundError(file, f"cannot open the file: {error.strerror or error}") from None
    try:
        if not container.streams.video:
            kinds: list[str] = sorted({str(stream.type) for stream in container.streams}) or ["no streams"]
            raise NotAVideoError(file, f"no video stream (found: {', '.join(kinds)})")
        stream = container.streams.video[0]
        if stream.codec_context is None:
            raise NotAVideoError(file, "no decoder for its video codec in this FFmpeg build")
        yield container, stream
    finally:
        container.close()


def _describe(error: BaseException) -> str:
    """FFmpeg error text without the file name PyAV appends (the message already names the file)."""
    if isinstance(error, av.FFmpegError) and error.strerror:
        return str(error.strerror)
    return str(error)


def corrupt(path: str | os.PathLike[str], what: str, error: BaseException) -> CorruptMediaError:
    """A `CorruptMediaError` for an FFmpeg failure while doing `what`."""
    return CorruptMediaError(path, f"{what} failed: {_describe(error)}")
