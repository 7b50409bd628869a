"""A cheap identity for a file's current content: (real path, size, mtime_ns, ctime_ns, inode, device).

Why: hashing a 500 MB video on every request would cost more than sampling it, so results computed
from the content (its hash, its packet index) are remembered under this key. Size and modification
time are not enough: `rsync --inplace -t` and `cp --preserve=timestamps` onto an existing file
rewrite it in place (same inode) with the same size and the source's mtime. The change time
(`st_ctime`) is the one timestamp no user tool can set: the kernel moves it on every write and
metadata change, so any rewrite gives a new identity. Measured cost: none beyond the `stat` already
made (benchmarks/frame_cache_check.py compares it with hashing the file on every request).

A file changed within `RACY_NS` of being looked at is "racily clean" (git's term): the kernel's
coarse clock may give a second write in the same tick the same ctime, so results for such a file
are not remembered (`settled`); it is simply looked at again next time.
"""

from __future__ import annotations

import os
import time
from typing import NamedTuple

#: A file whose ctime is this close to now may still be written in the same clock tick (Linux
#: stamps inodes with a coarse clock: up to 10 ms per tick).
RACY_NS = 100_000_000


class FileIdentity(NamedTuple):
    realpath: str
    size: int
    mtime_ns: int
    ctime_ns: int
    inode: int
    device: int


def file_identity(path: str | os.PathLike[str]) -> FileIdentity:
    """Identity of the file `path` points to now (follows symlinks)."""
    real = os.path.realpath(path)
    stat = os.stat(real)
    return FileIdentity(real, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino, stat.st_dev)


def settled(identity: FileIdentity, now_ns: int | None = None) -> bool:
    """Whether the file last changed long enough ago that results may be remembered under `identity`."""
    now = time.time_ns() if now_ns is None else now_ns
    return now - identity.ctime_ns >= RACY_NS
