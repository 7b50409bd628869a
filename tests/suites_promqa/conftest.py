"""Fixtures for ProMQA: the sample set (generated once) and the real release files when present."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from expvid.schema.dataset import Dataset
from expvid.suites.promqa import load_promqa, make_promqa_sample

#: The published ProMQA files (examples.json, graphs.json); CI has them under ../shared.
REAL_DIR = Path(
    os.environ.get("EXPVID_PROMQA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data" / "promqa")
)


@pytest.fixture(scope="session")
def promqa_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("promqa") / "sample"
    make_promqa_sample(root)
    return root


@pytest.fixture(scope="session")
def promqa_dataset(promqa_dir: Path) -> Dataset:
    return load_promqa(promqa_dir)


@pytest.fixture(scope="session")
def real_dir() -> Path:
    if not (REAL_DIR / "examples.json").is_file():
        pytest.skip(f"the ProMQA release files are not at {REAL_DIR}")
    return REAL_DIR


@pytest.fixture(scope="session")
def real_dataset(real_dir: Path) -> Dataset:
    return load_promqa(real_dir, check_media=False)


@pytest.fixture(scope="session")
def real_examples(real_dir: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((real_dir / "examples.json").read_text())
    return data
