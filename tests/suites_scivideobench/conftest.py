"""Fixtures for SciVideoBench: the sample release, generated once per session (read-only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from expvid.schema.dataset import Dataset
from expvid.suites.scivideobench import load_scivideobench, make_scivideobench_sample


@pytest.fixture(scope="session")
def svb_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("svb") / "sample"
    make_scivideobench_sample(root)
    return root


@pytest.fixture(scope="session")
def svb_dataset(svb_dir: Path) -> Dataset:
    return load_scivideobench(svb_dir)
