"""Release files in parquet (Hugging Face's format for datasets), read a row at a time.

Rows are read a batch at a time with pyarrow, through a 1 MiB read buffer and without
pre-buffering (a release with embedded images is hundreds of megabytes; with pyarrow's defaults the
reader's peak memory is about the file's size, with these about half; see
`benchmarks/sfe_parquet_load.py`), each with its 1-based row number for problems. A file that
cannot be opened, or whose rest cannot be read, is a `FileProblem`: its records are lost in
unknown number, and the runner refuses to evaluate such a dataset.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from expvid.schema import DataError, RecordProblem
from expvid.schema.dataset import FileProblem

PARQUET_SUFFIX = ".parquet"
BATCH_ROWS = 32
READ_BUFFER = 1 << 20


def pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a declared dependency
        raise DataError("reading parquet release files needs pyarrow: pip install pyarrow") from None
    return pq


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def parquet_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | RecordProblem]]:
    """Each row of a parquet file as a dict, with its 1-based row number."""
    pq = pyarrow_parquet()
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
