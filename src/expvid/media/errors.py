"""Errors raised by `expvid.media`: one family, every message names the file.

Why a family: the evaluation runner records a media failure as `ErrorKind.MEDIA` for the item and
moves on, so it must be able to catch exactly these (and nothing else) with one `except MediaError`.
The subclasses let tests and callers tell a missing file from a damaged one.
"""

from __future__ import annotations

import os


class MediaError(Exception):
    """A video (or image) could not be read or sampled as asked. `path` names the file."""

    def __init__(self, path: str | os.PathLike[str] | None, problem: str) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.problem = problem
        super().__init__(f"{self.path}: {problem}" if self.path is not None else problem)

    def for_path(self, path: str | os.PathLike[str]) -> MediaError:
        """The same error, naming `path` (for checks made before the file was known)."""
        return type(self)(path, self.problem)


class MediaNotFoundError(MediaError, FileNotFoundError):
    """The file does not exist (or is not a regular file)."""


class EmptyMediaError(MediaError):
    """The file is empty, or its video stream holds no frames."""


class NotAVideoError(MediaError):
    """The file is not a media container, or holds no video stream (text, audio only, ...)."""


class CorruptMediaError(MediaError):
    """The container or the coded frames are damaged: demuxing or decoding failed."""


class TruncatedMediaError(CorruptMediaError):
    """The file ends before the frames its container announces (an interrupted copy or download)."""


class WindowError(MediaError, ValueError):
    """A requested window or target time lies outside the video; never silently clamped."""


class SamplingError(MediaError, ValueError):
    """The sampling request itself is invalid (no mode chosen, N < 1, bad size or format, ...)."""
