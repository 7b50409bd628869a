"""SFE's Hub copy is parquet with the images inside; the SFE loader reads JSONL records and image files.

Each parquet file becomes `<same folder>/<stem>.jsonl` next to it, one record per row, and every image
cell (the `datasets` Image feature: `{"bytes": ..., "path": ...}`, alone or in a list) is written to
`images/<name>` and replaced by that path, so the loader and the official task's `images/<file name>`
lookup both find it. Texts are written unchanged (`ensure_ascii=False`); re-running skips parquet files
whose JSONL is newer. Needs `pyarrow` (`pip install 'expvid[hub]'`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def parquet_to_jsonl(root: Path, files: list[Path]) -> list[str]:
    """Convert each parquet file; returns problems (an unreadable file names itself)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return [
            "SFE's Hub files are parquet; reading them needs pyarrow: pip install 'expvid[hub]' "
            "(or pip install pyarrow), then re-run the same command"
        ]
    problems = []
    for path in files:
        target = path.with_suffix(".jsonl")
        if target.is_file() and target.stat().st_mtime_ns >= path.stat().st_mtime_ns:
            continue
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as error:  # pyarrow raises its own ArrowInvalid / OSError family
            problems.append(f"{path}: not a readable parquet file ({error})")
            continue
        tmp = target.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as out:
            for number, row in enumerate(rows):
                record = {
                    key: _images_to_paths(value, root, f"{path.stem}_{number}_{key}")
                    for key, value in row.items()
                }
                out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        tmp.replace(target)
    return problems


def _images_to_paths(value: Any, root: Path, fallback: str) -> Any:
    if isinstance(value, dict) and isinstance(value.get("bytes"), bytes | bytearray):
        return _write_image(value, root, fallback)
    if isinstance(value, list) and value and all(isinstance(v, dict) and "bytes" in v for v in value):
        return [_write_image(v, root, f"{fallback}_{k}") for k, v in enumerate(value)]
    return value


def _write_image(cell: dict[str, Any], root: Path, fallback: str) -> str:
    data = bytes(cell["bytes"])
    name = Path(str(cell.get("path") or "")).name
    if not name:
        name = f"{fallback}_{hashlib.sha256(data).hexdigest()[:12]}.png"
    target = root / "images" / name
    if not target.is_file() or target.read_bytes() != data:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return f"images/{name}"
