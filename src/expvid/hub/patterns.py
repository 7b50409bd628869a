"""The shortest list of `allow_patterns` that selects exactly the files a task selection needs.

Why: `snapshot_download` matches every repo file against every pattern (fnmatch), so one pattern
per video (8,000 for ExpVid) costs tens of millions of matches. Whole folders whose every file is
needed collapse to `folder/*` (fnmatch's `*` crosses `/`, so that is the whole subtree and nothing
else); the rest stay exact paths. Paths are escaped, so `[`, `*` and `?` in file names are literal.
"""

from __future__ import annotations

import glob
from collections import Counter
from collections.abc import Iterable
from posixpath import dirname


def _ancestors(path: str) -> list[str]:
    folders = []
    folder = dirname(path)
    while folder:
        folders.append(folder)
        folder = dirname(folder)
    return folders


def minimal_patterns(needed: Iterable[str], available: Iterable[str]) -> list[str]:
    """Patterns matching exactly the `needed` repo paths among `available` (needed must be a subset)."""
    wanted = set(needed)
    total: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for path in available:
        for folder in _ancestors(path):
            total[folder] += 1
            if path in wanted:
                hit[folder] += 1
    patterns: set[str] = set()
    for path in wanted:
        full = [folder for folder in _ancestors(path) if total[folder] and hit[folder] == total[folder]]
        if full:
            patterns.add(glob.escape(full[-1]) + "/*")  # the highest folder that is wholly needed
        else:
            patterns.add(glob.escape(path))
    return sorted(patterns)
