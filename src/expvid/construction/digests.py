"""Content digests of source files, so that nothing an item is named by depends on a file's time.

Clip names, stage fingerprints and item content hashes name a source video by the sha256 of its
bytes, not by its size and modification time: `touch` on the sources, or copying the folder to
another machine without preserving times, must not rename or re-cut a single clip. Hashing a 300 MB
video takes a fraction of a second to seconds, so each digest is remembered in
`.build/digests.json` under the file's (path, size, mtime, inode): an unchanged file is never read
again, and a touched or copied file is read once and gets the same digest back.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path

from expvid.construction.state import write_atomic

DIGEST_FILE = "digests.json"


def file_sha256(path: Path) -> str:
    """sha256 hex of the file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _stat(path: Path) -> list[int]:
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ino]


class DigestCache:
    """sha256 of files, cached by stat in `root/digests.json` (root None: nothing is remembered)."""

    def __init__(self, root: Path | None) -> None:
        self.path = None if root is None else root / DIGEST_FILE
        self._lock = threading.Lock()
        #: resolved path -> {"stat": [size, mtime_ns, inode], "sha256": hex}
        self._known: dict[str, dict[str, object]] = {}
        self._dirty = False
        self.hashed = 0  # files read in this run (new, touched or copied)
        if self.path is not None and self.path.is_file():
            try:
                loaded = json.loads(self.path.read_text(encoding="utf-8"))
                self._known = {str(k): dict(v) for k, v in loaded.items()}
            except (OSError, ValueError, AttributeError, TypeError):
                self._known = {}

    def digest(self, path: Path) -> str:
        name = str(path.resolve())
        stat = _stat(path)
        with self._lock:
            known = self._known.get(name)
        if known is not None and known.get("stat") == stat and isinstance(known.get("sha256"), str):
            return str(known["sha256"])
        value = file_sha256(path)
        with self._lock:
            self._known[name] = {"stat": stat, "sha256": value}
            self._dirty = True
            self.hashed += 1
        return value

    def save(self) -> None:
        """Write the cache, keeping only files that still exist (a moved folder's old paths go)."""
        if self.path is None or not self._dirty:
            return
        with self._lock:
            live = {k: v for k, v in self._known.items() if os.path.exists(k)}
            self._dirty = False
        write_atomic(self.path, json.dumps(live, sort_keys=True) + "\n")
