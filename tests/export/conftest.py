"""Fixtures for the lmms-eval export tests (the harness itself is in `lmms_harness.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lmms_harness import TASKS, HarnessRun, LmmsHarness, scripted_model

from expvid.export.lmms_eval import write_lmms_eval_package


@pytest.fixture(scope="session")
def package(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lmms") / "expvid_tasks"
    write_lmms_eval_package(out, sample_dir)
    return out


@pytest.fixture(scope="session")
def harness(package: Path, tmp_path_factory: pytest.TempPathFactory) -> LmmsHarness:
    return LmmsHarness(package, tmp_path_factory.mktemp("hf_datasets"))


@pytest.fixture(scope="session")
def lmms_run(harness: LmmsHarness, tmp_path_factory: pytest.TempPathFactory) -> tuple[HarnessRun, Path]:
    """One simulated lmms-eval run over five tasks (every answer type), logged in the 0.4+ format."""
    logdir = tmp_path_factory.mktemp("lmms_logs")
    run = harness.run([f"expvid_{t}" for t in TASKS], scripted_model, logdir)
    return run, logdir
