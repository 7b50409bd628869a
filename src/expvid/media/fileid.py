"""A cheap identity for a file's current content: (real path, size, mtime_ns, inode, device).

Why: hashing a 500 MB video on every request would cost more than sampling it. Any rewrite of the
file changes its size or modification time (and a replace changes the inode), so results computed
from the content (its hash, its packet index) can be remembered under this key.
"""

from __future__ import annotations

import os
from typing import NamedTuple


class FileIdentity(NamedTuple):
    realpath: str
    size: int
    mtime_ns: int
    inode: int
    device: int


def file_identity(path: str | os.PathLike[str]) -> FileIdentity:
    """Identity of the file `path` points to now (follows symlinks)."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    return FileIdentity(real, stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev)
