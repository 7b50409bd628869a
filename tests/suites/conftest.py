"""Fixtures for the suites area: the loaded sample, its truth, and hand-written release files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from expvid.schema.dataset import Dataset
from expvid.suites.expvid_suite import EXPVID_TASKS, TASKS, load_expvid
from expvid.suites.sample import read_truth

#: Writes a release under a root: {task: [record dict or raw line text]}; creates the listed videos.
WriteRelease = Callable[[Path, dict[str, list[Any]], list[str]], Path]


@pytest.fixture(scope="session")
def sample_truth(sample_dir: Path) -> dict[str, Any]:
    return read_truth(sample_dir)


@pytest.fixture(scope="session")
def sample_dataset(sample_dir: Path) -> Dataset:
    return load_expvid(sample_dir)


@pytest.fixture(scope="session")
def raw_records(sample_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The sample's annotation records as written, per task (for verbatim comparisons)."""
    records = {}
    for spec in EXPVID_TASKS:
        lines = (sample_dir / spec.path).read_text(encoding="utf-8").splitlines()
        records[spec.name] = [json.loads(line) for line in lines]
    return records


@pytest.fixture
def write_release() -> WriteRelease:
    def write(root: Path, files: dict[str, list[Any]], videos: list[str]) -> Path:
        for task, lines in files.items():
            path = root / TASKS[task].path
            path.parent.mkdir(parents=True, exist_ok=True)
            text = "".join(
                (line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n"
                for line in lines
            )
            path.write_text(text, encoding="utf-8")
        for video in videos:
            (root / video).parent.mkdir(parents=True, exist_ok=True)
            (root / video).write_bytes(b"\x00\x00\x00\x18ftypisom")  # existence is all the loader checks
        return root

    return write
