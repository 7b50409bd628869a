"""Runs of the bundled sample for the viewer tests, made once per session with the real CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from view_support import SampleRuns, eval_process

from chromium import launched_chromium

#: Few frames per level keep decoding cheap; the viewer must show exactly what the run recorded.
FRAMES = "L1=8,L2=8,L3=16"


@pytest.fixture(scope="session")
def sample_runs(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> SampleRuns:
    base = tmp_path_factory.mktemp("view_runs")
    cache_a = base / "cache"
    run_a, run_b = base / "run_random", base / "run_first"
    jobs = [
        eval_process("--data", str(sample_dir), "--model", "random", "--out", str(run_a), "--limit", "3",
                     "--frames", FRAMES, "--cache-dir", str(cache_a)),
        eval_process("--data", str(sample_dir), "--model", "first-option", "--out", str(run_b), "--limit", "3",
                     "--tasks", "tools,materials", "--frames", FRAMES, "--no-cache"),
    ]  # fmt: skip
    for job in jobs:
        _, err = job.communicate(timeout=600)
        assert job.returncode == 0, err
    return SampleRuns(data=sample_dir, run_a=run_a, run_b=run_b, cache_a=cache_a)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Module-scoped: Playwright's sync API keeps an event loop running in this thread while it is
    open, and later test modules call asyncio.run()."""
    with launched_chromium() as chromium:
        yield chromium
