"""Fixtures for MMVU: the sample release in the published shapes, generated once per session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from expvid.schema.dataset import Dataset
from expvid.suites.mmvu import MMVUSuite, make_mmvu_sample


@pytest.fixture(scope="session")
def mmvu_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mmvu") / "sample"
    make_mmvu_sample(root)
    return root


@pytest.fixture(scope="session")
def mmvu_dataset(mmvu_dir: Path) -> Dataset:
    return MMVUSuite().load(mmvu_dir)


@pytest.fixture(scope="session")
def mmvu_records(mmvu_dir: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads((mmvu_dir / "validation.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


@pytest.fixture
def plain():
    """CLI output with every run of whitespace made one space (terminals wrap at any width)."""
    return lambda output: " ".join(output.split())
