"""SFE as Hugging Face publishes it: parquet files with images embedded (the `datasets` image
feature: `{bytes, path}` structs) or named (looked up under images/), read with no export step.

The parquet files are written here with pyarrow in the shapes `datasets` writes, from the
sample's own JSONL records, so the parquet load must give the very same items.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from expvid.schema import DataError
from expvid.suites.sfe import load_sfe
from expvid.suites.sfe.parquet import image_extension

IMAGE = pa.struct([pa.field("bytes", pa.binary()), pa.field("path", pa.string())])


def _records(root: Path, language: str) -> list[dict[str, Any]]:
    path = root / f"20250515-{language}" / "sfe.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]], images: pa.DataType) -> None:
    schema = pa.schema(
        [
            ("id", pa.string()),
            ("field", pa.string()),
            ("question_type", pa.string()),
            ("question", pa.string()),
            ("options", pa.list_(pa.string())),
            ("answer", pa.string()),
            ("images", images),
            ("cognitive_level", pa.string()),
        ]
    )
    columns = {name: [row.get(name) for row in rows] for name in schema.names}
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns, schema=schema), path, row_group_size=4)  # several row groups


def _embedded_release(sample: Path, target: Path) -> None:
    """The HF layout with images embedded: no images/ folder at all."""
    for language in ("en", "zh"):
        rows = []
        for record in _records(sample, language):
            blobs = [{"bytes": (sample / p).read_bytes(), "path": Path(p).name} for p in record["images"]]
            rows.append({**record, "images": blobs})
        _write(target / f"20250611-{language}" / "test-00000-of-00001.parquet", rows, pa.list_(IMAGE))


def _comparable(items) -> list[tuple[Any, ...]]:
    return [
        (i.id, i.task, i.level, i.question, i.answer, i.meta["options"], len(i.media.paths)) for i in items
    ]


def test_embedded_images_are_decoded_once_into_the_cache(sfe_dir, tmp_path) -> None:
    release = tmp_path / "hf"
    _embedded_release(sfe_dir, release)
    cache = tmp_path / "cache"
    from_jsonl = load_sfe(sfe_dir, languages=("en", "zh"), strict=True)
    from_parquet = load_sfe(release, languages=("en", "zh"), strict=True, image_cache=cache)
    assert _comparable(from_parquet.items) == _comparable(from_jsonl.items)
    for parquet_item, jsonl_item in zip(from_parquet.items, from_jsonl.items, strict=True):
        for cached, original in zip(parquet_item.media.paths, jsonl_item.media.paths, strict=True):
            assert Path(cached).is_relative_to(cache) and Path(cached).suffix == Path(original).suffix
            assert Path(cached).read_bytes() == Path(original).read_bytes()  # the released bytes, as sent
    files = sorted(cache.rglob("*.*"))
    distinct = {Path(p).read_bytes() for item in from_jsonl.items for p in item.media.paths}
    assert len(files) == len(distinct)  # shared images (both languages) are stored once
    stamps = {path: path.stat().st_mtime_ns for path in files}
    again = load_sfe(release, languages=("en", "zh"), image_cache=cache)
    assert _comparable(again.items) == _comparable(from_parquet.items)
    assert {
        path: path.stat().st_mtime_ns for path in sorted(cache.rglob("*.*"))
    } == stamps  # nothing rewritten
    assert set(from_parquet.file_hashes) == {
        "20250611-en/test-00000-of-00001.parquet",
        "20250611-zh/test-00000-of-00001.parquet",
    }


def test_named_images_are_looked_up_under_images(sfe_dir, tmp_path) -> None:
    release = tmp_path / "hf"
    shutil.copytree(sfe_dir / "images", release / "images")
    rows = [
        {**record, "images": [Path(p).name for p in record["images"]]} for record in _records(sfe_dir, "en")
    ]
    _write(release / "20250611-en" / "test.parquet", rows, pa.list_(pa.string()))
    dataset = load_sfe(release, strict=True, image_cache=tmp_path / "cache")
    reference = load_sfe(sfe_dir, strict=True)
    assert _comparable(dataset.items) == _comparable(reference.items)
    assert all(Path(p).parent == (release / "images").resolve() for i in dataset.items for p in i.media.paths)
    assert not (tmp_path / "cache").exists()  # nothing embedded, nothing written


def test_bad_rows_are_reported_by_row_and_the_rest_loads(sfe_dir, tmp_path) -> None:
    release = tmp_path / "hf"
    rows = []
    for record in _records(sfe_dir, "en"):
        blobs = [{"bytes": (sfe_dir / p).read_bytes(), "path": None} for p in record["images"]]
        rows.append({**record, "images": blobs})
    rows[2]["images"] = [{"bytes": b"%PDF-1.7 not an image", "path": "scan.pdf"}]
    rows[5]["question_type"] = "essay"
    path = release / "20250611-en" / "test.parquet"
    _write(path, rows, pa.list_(IMAGE))
    dataset = load_sfe(release, image_cache=tmp_path / "cache")
    assert len(dataset.items) == len(rows) - 2
    problems = {(p.path, p.line): p.message for p in dataset.problems}
    assert "is not PNG, JPEG" in problems[(path, 3)] and "scan.pdf" in problems[(path, 3)]
    assert "question_type 'essay'" in problems[(path, 6)]
    with pytest.raises(DataError, match=r"test\.parquet:3"):
        load_sfe(release, strict=True, image_cache=tmp_path / "cache")


def test_a_damaged_parquet_file_is_a_problem_not_a_crash(sfe_dir, tmp_path) -> None:
    release = tmp_path / "hf"
    (release / "20250611-en").mkdir(parents=True)
    (release / "20250611-en" / "test.parquet").write_bytes(b"PAR1 truncated")
    dataset = load_sfe(release, image_cache=tmp_path / "cache")
    assert not dataset.items and "not a readable parquet file" in dataset.problems[0].message


def test_the_suite_loads_parquet_end_to_end_with_the_default_cache(sfe_dir, tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from expvid.cli.main import app

    release = tmp_path / "hf"
    _embedded_release(sfe_dir, release)
    monkeypatch.setenv("EXPVID_CACHE_DIR", str(tmp_path / "expvid-cache"))
    result = CliRunner().invoke(
        app,
        ["eval", "--suite", "sfe", "--data", str(release), "--model", "random", "--out", str(tmp_path / "run"),
         "--tasks", "grounding,mcq", "--quiet", "--no-cache"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert any((tmp_path / "expvid-cache" / "sfe-images").rglob("*.png"))
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["tasks"]["grounding"]["n"] == 2 and scores["tasks"]["mcq"]["n"] == 2


@pytest.mark.parametrize(
    ("data", "extension"),
    [(b"\x89PNG\r\n\x1a\n....", ".png"), (b"\xff\xd8\xff\xe0..", ".jpg"), (b"RIFF\x00\x00\x00\x00WEBPVP8 ", ".webp"),
     (b"GIF89a..", ".gif"), (b"II*\x00....", ".tif"), (b"%PDF", None)],
)  # fmt: skip
def test_image_extension_from_magic_bytes(data: bytes, extension: str | None) -> None:
    assert image_extension(data) == extension


def test_cache_files_are_written_atomically(sfe_dir, tmp_path) -> None:
    release = tmp_path / "hf"
    _embedded_release(sfe_dir, release)
    load_sfe(release, image_cache=tmp_path / "cache")
    assert not [p for p in (tmp_path / "cache").rglob(".part-*")]
    assert all(os.access(p, os.R_OK) for p in (tmp_path / "cache").rglob("*.png"))
