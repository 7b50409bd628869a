"""Content-addressed on-disk cache of sampled frames.

Why: the same video is sampled the same way for every model of a comparison (and again on every
resumed run); the second time should cost a stat, a small read and nothing else.

- Keys are hashes of (file content hash, sampling request, output settings), so a renamed or
  copied video still hits, and a re-encoded one misses.
- The content hash of a big file is remembered under its identity (real path, size, mtime_ns,
  ctime_ns, inode, device; see `fileid`) in memory and on disk, so a file is hashed once, not on
  every request, and a file rewritten in place with the same size and mtime (`rsync --inplace -t`,
  `cp --preserve`) is hashed again: the frames are those of the content, as promised.
- Entries are single files written to a temporary name and `os.replace`d into place: a reader sees
  the old entry, the new one, or none, never half of one, with any number of processes at once.
- A damaged entry (bad magic, short file, checksum mismatch) is treated as a miss and rewritten.
- Cache trouble (read-only disk, full disk) never fails sampling: it is logged and skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.media.atomic import write_bytes_atomic
from expvid.media.fileid import FileIdentity, file_identity, settled

log = logging.getLogger(__name__)

#: Bump when the entry layout or the meaning of cached frames changes: old entries then miss.
#: 2: a video's end is measured from its frames' timestamps, the same for every container.
#: 3: times count from a running-clock format's first timestamp; non-square pixels are honoured;
#:    file identities include the change time (an in-place rewrite keeping size and mtime).
CACHE_VERSION = 3
_MAGIC = b"EXPVIDF1"
_HEADER = struct.Struct(">8sI")  # magic, header length


def default_cache_dir() -> Path:
    """`$EXPVID_CACHE_DIR`, else `~/.cache/expvid`."""
    configured = os.environ.get("EXPVID_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "expvid"


@dataclass(frozen=True)
class CacheEntry:
    """What is stored per key: JSON metadata and one binary blob per frame."""

    meta: dict[str, Any]
    blobs: list[bytes]


_hash_memo: dict[FileIdentity, str] = {}
_hash_lock = threading.Lock()


def hash_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the file's bytes (hex)."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class FrameCache:
    """A directory of cached frame sets: `<root>/frames/ab/<key>.bin`, `<root>/hashes/...`."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root is not None else default_cache_dir()

    def __repr__(self) -> str:
        return f"FrameCache({str(self.root)!r})"

    @property
    def frames_dir(self) -> Path:
        return self.root / "frames"

    @property
    def hashes_dir(self) -> Path:
        return self.root / "hashes"

    # -- content hashes -------------------------------------------------------------------------

    def content_hash(self, path: str | os.PathLike[str]) -> str:
        """The file's SHA-256, remembered under its identity (in memory, then on disk)."""
        identity = file_identity(path)
        known = self._remembered_hash(identity)
        if known:
            return known
        looked_at = time.time_ns()
        known = hash_file(identity.realpath)
        # Remember it only if the file was not rewritten while we read it and cannot still be
        # rewritten within the same ctime tick (see `fileid.settled`).
        if file_identity(path) != identity or not settled(identity, looked_at):
            return known
        record = {"identity": list(identity), "sha256": known}
        self._write_atomic(self._hash_file(identity), json.dumps(record).encode())
        with _hash_lock:
            _hash_memo[identity] = known
        return known

    def known_content_hash(self, path: str | os.PathLike[str]) -> str | None:
        """The file's SHA-256 if it is already remembered (in memory or on disk), else None: a
        lookup that never reads the file (for callers that must not block, such as an event loop)."""
        return self._remembered_hash(file_identity(path))

    def _hash_file(self, identity: FileIdentity) -> Path:
        return self.hashes_dir / f"{_digest(list(identity))}.json"

    def _remembered_hash(self, identity: FileIdentity) -> str | None:
        """The SHA-256 remembered for `identity`: in memory, else on disk (then kept in memory too)."""
        with _hash_lock:
            known = _hash_memo.get(identity)
        if known:
            return known
        try:
            stored = json.loads(self._hash_file(identity).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (
            isinstance(stored, dict)
            and stored.get("identity") == list(identity)
            and isinstance(stored.get("sha256"), str)
        ):
            with _hash_lock:
                _hash_memo[identity] = stored["sha256"]
            return str(stored["sha256"])
        return None

    # -- keys and entries ----------------------------------------------------------------------

    @staticmethod
    def key(content_hash: str, request: dict[str, Any]) -> str:
        """Cache key of a request on a file with this content."""
        return _digest({"version": CACHE_VERSION, "content": content_hash, "request": request})

    def entry_path(self, key: str) -> Path:
        return self.frames_dir / key[:2] / f"{key}.bin"

    def load(self, key: str) -> CacheEntry | None:
        """The entry under `key`, or None when absent or damaged (a damaged entry is removed)."""
        path = self.entry_path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            log.warning("frame cache: cannot read %s: %s", path, error)
            return None
        entry = _parse(data)
        if entry is None:
            log.warning("frame cache: ignoring damaged entry %s", path)
            with contextlib.suppress(OSError):
                path.unlink()
        return entry

    def store(self, key: str, entry: CacheEntry) -> bool:
        """Write the entry atomically; False (and a log line) when the cache is not writable."""
        return self._write_atomic(self.entry_path(key), _serialize(entry))

    def clear(self) -> None:
        """Remove every cached frame set and remembered hash under this root."""
        for directory in (self.frames_dir, self.hashes_dir):
            if directory.exists():
                for file in directory.rglob("*"):
                    if file.is_file():
                        file.unlink(missing_ok=True)
        with _hash_lock:
            _hash_memo.clear()

    def _write_atomic(self, target: Path, data: bytes) -> bool:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(target, data)
        except OSError as error:
            log.warning("frame cache: cannot write %s: %s", target, error)
            return False
        return True


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _serialize(entry: CacheEntry) -> bytes:
    payload = b"".join(entry.blobs)
    header = json.dumps(
        {
            "meta": entry.meta,
            "sizes": [len(blob) for blob in entry.blobs],
            "crc32": zlib.crc32(payload),
        },
        separators=(",", ":"),
    ).encode()
    return _HEADER.pack(_MAGIC, len(header)) + header + payload


def _parse(data: bytes) -> CacheEntry | None:
    """Inverse of `_serialize`; None for anything that does not check out."""
    if len(data) < _HEADER.size:
        return None
    magic, header_size = _HEADER.unpack_from(data)
    if magic != _MAGIC or _HEADER.size + header_size > len(data):
        return None
    try:
        header = json.loads(data[_HEADER.size : _HEADER.size + header_size])
        sizes = [int(size) for size in header["sizes"]]
        meta = header["meta"]
        crc = int(header["crc32"])
    except (ValueError, KeyError, TypeError):
        return None
    payload = memoryview(data)[_HEADER.size + header_size :]
    if len(payload) != sum(sizes) or zlib.crc32(payload) != crc or not isinstance(meta, dict):
        return None
    blobs, offset = [], 0
    for size in sizes:
        blobs.append(bytes(payload[offset : offset + size]))
        offset += size
    return CacheEntry(meta=meta, blobs=blobs)
