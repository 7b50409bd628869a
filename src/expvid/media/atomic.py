"""Writing a file whole or not at all: a temporary file beside it, renamed into place.

Why: frame caches, image caches and transcripts are read while other processes write them, and a
run can be killed at any moment; a reader must never see half a file, and a failed write must leave
no temporary file behind.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    """Write `data` to `path` (its folder must exist) through a temporary file and a rename."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
