"""SFE as Hugging Face publishes it: parquet files, with images as names or embedded bytes.

A Hugging Face `datasets` image column is stored in parquet as a struct `{bytes, path}` (a list
of them for several images per question); a plain string column holds file names looked up
under `images/`. Both are read here without a manual export step:

- rows are read a batch at a time with pyarrow, through a 1 MiB read buffer and without
  pre-buffering (a release with embedded images is hundreds of megabytes; with pyarrow's defaults
  the reader's peak memory is about the file's size, with these about half; see
  `benchmarks/sfe_parquet_load.py`), each with its 1-based row number for problems;
- embedded image bytes are written ONCE into the frame cache (`<cache>/sfe-images/`), named by
  their sha256 with the extension their magic bytes say, and never re-encoded: the model gets the
  released bytes. A later load finds the file and writes nothing.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from expvid.schema import DataError, RecordProblem
from expvid.suites.base import FileProblem

PARQUET_SUFFIX = ".parquet"
IMAGE_CACHE = "sfe-images"
BATCH_ROWS = 32
READ_BUFFER = 1 << 20

#: Leading bytes -> file extension (the mime type the model is told follows from it).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF87a", ".gif"),
    (b"GIF89a", ".gif"),
    (b"II*\x00", ".tif"),
    (b"MM\x00*", ".tif"),
    (b"BM", ".bmp"),
)


def image_extension(data: bytes) -> str | None:
    """The file extension of encoded image bytes, from their magic number; None when unknown."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    for magic, extension in _MAGIC:
        if data.startswith(magic):
            return extension
    return None


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a declared dependency
        raise DataError("reading SFE's parquet files needs pyarrow: pip install pyarrow") from None
    return pq


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def parquet_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | RecordProblem]]:
    """Each row of a parquet file as a dict, with its 1-based row number."""
    pq = _pyarrow_parquet()
    try:
        handle = pq.ParquetFile(path, buffer_size=READ_BUFFER, pre_buffer=False)
    except Exception as error:  # pyarrow raises its own ArrowInvalid / OSError types
        yield 0, FileProblem(path, 0, f"not a readable parquet file ({error})")
        return
    row = 0
    try:
        for batch in handle.iter_batches(batch_size=BATCH_ROWS):
            for record in batch.to_pylist():
                row += 1
                yield row, record
    except Exception as error:
        yield row + 1, FileProblem(path, row + 1, f"cannot read the rest of the parquet file ({error})")


class ImageStore:
    """Embedded image bytes written once into a cache directory, content-addressed."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, data: bytes) -> Path:
        """The cached file holding `data` (written now only when it is not there yet)."""
        extension = image_extension(data)
        if extension is None:
            raise ValueError(f"embedded image of {len(data)} bytes is not PNG, JPEG, GIF, WebP, TIFF or BMP")
        digest = hashlib.sha256(data).hexdigest()
        target = self.root / digest[:2] / f"{digest}{extension}"
        if target.is_file() and target.stat().st_size == len(data):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return target
