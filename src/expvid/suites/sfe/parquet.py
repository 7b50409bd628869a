"""SFE as Hugging Face publishes it: parquet files, with images as names or embedded bytes.

A Hugging Face `datasets` image column is stored in parquet as a struct `{bytes, path}` (a list
of them for several images per question); a plain string column holds file names looked up
under `images/`. Both are read here without a manual export step:

- rows are read a batch at a time (`expvid.suites.parquet_io`, shared with every suite whose
  release is parquet), each with its 1-based row number for problems;
- embedded image bytes are written ONCE into the frame cache (`<cache>/sfe-images/`), named by
  their sha256 with the extension their magic bytes say, and never re-encoded: the model gets the
  released bytes. A later load finds the file and writes nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from expvid.media.atomic import write_bytes_atomic
from expvid.suites.parquet_io import PARQUET_SUFFIX, file_sha256, parquet_records

__all__ = ["IMAGE_CACHE", "PARQUET_SUFFIX", "ImageStore", "file_sha256", "image_extension", "parquet_records"]

IMAGE_CACHE = "sfe-images"

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
        return write_bytes_atomic(target, data)
