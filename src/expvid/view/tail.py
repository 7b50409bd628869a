"""Read-only, incremental reading of run files that another process may be writing right now.

Why not `expvid.run.rundir.read_records`: the viewer must never open a run file for writing (so it
cannot use `AppendLog`'s repair), must not re-parse a 10,000-line file every time `expvid eval`
appends one line, and must survive a record the current schema rejects (an older or newer run).

- `JsonlTail` keeps the byte offset after the last complete line it read. A partial last line (the
  writer is mid-`write`, or was killed) is left for the next refresh. A file that was replaced
  (another inode) or shrank is read again from the start.
- `FileStamp` tells whether a whole-file document (manifest.json, scores.json, item_scores.jsonl,
  all rewritten by atomic rename) changed since it was read.

Files are only ever opened with mode "rb" (O_RDONLY).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class FileStamp:
    """What identifies one version of a file without reading it."""

    inode: int
    device: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileStamp | None:
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        return cls(stat.st_ino, stat.st_dev, stat.st_size, stat.st_mtime_ns)


@dataclass(frozen=True)
class Line:
    """One complete, non-blank line of a JSONL file: its number and its bytes."""

    number: int
    text: bytes


class JsonlTail:
    """The complete lines appended to a JSONL file since the last call, read-only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._line = 0
        self._file: tuple[int, int] | None = None
        #: Bytes after the last newline at the last read (a line being written, or a torn tail).
        self.pending_bytes = 0

    def read_new(self) -> tuple[bool, list[Line]]:
        """`(restarted, lines)`: restarted is True when earlier lines must be forgotten."""
        stamp = FileStamp.of(self.path)
        if stamp is None:
            restarted = self._file is not None
            self._offset, self._line, self._file, self.pending_bytes = 0, 0, None, 0
            return restarted, []
        restarted = False
        if self._file != (stamp.inode, stamp.device) or stamp.size < self._offset:
            restarted = self._file is not None
            self._offset, self._line, self._file = 0, 0, (stamp.inode, stamp.device)
        if stamp.size == self._offset:
            self.pending_bytes = 0
            return restarted, []
        with self.path.open("rb") as handle:
            handle.seek(self._offset)
            data = handle.read(stamp.size - self._offset)
        cut = data.rfind(b"\n")
        self.pending_bytes = len(data) - (cut + 1)
        if cut < 0:
            return restarted, []
        lines: list[Line] = []
        for raw in data[: cut + 1].split(b"\n")[:-1]:
            self._line += 1
            if raw.strip():
                lines.append(Line(self._line, raw))
        self._offset += cut + 1
        return restarted, lines


def read_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A JSON object file as `(value, None)`, `(None, None)` when absent, `(None, problem)` when bad."""
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        return None, f"{path}: not valid JSON ({error})"
    if not isinstance(value, dict):
        return None, f"{path}: expected a JSON object"
    return value, None


def read_jsonl_whole(path: Path) -> list[Line]:
    """Every complete line of a JSONL file (a partial last line is skipped), read-only."""
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return []
    cut = data.rfind(b"\n")
    return [Line(n, raw) for n, raw in enumerate(data[: cut + 1].split(b"\n")[:-1], start=1) if raw.strip()]


def stamps_token(paths: list[Path]) -> str:
    """A short token that changes whenever any of the files changes (or appears, or goes)."""
    parts = []
    for path in paths:
        stamp = FileStamp.of(path)
        parts.append("-" if stamp is None else f"{stamp.inode}:{stamp.size}:{stamp.mtime_ns}")
    return hashlib.sha1("|".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]
