"""Fixtures for the build tests: the sample's sources and one full build of them (session-scoped).

The full build runs every stage on all eight sample experiments against a real loopback
OpenAI-compatible server whose replies come from `build_responder.ScriptedLab`. It is shared by the
tests that only read its output; tests that need faults or a crash build small subsets of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from build_helpers import run_build
from build_responder import ScriptedLab

from expvid.fakes.models.server import LoopbackServer


@dataclass
class SampleBuild:
    sources: Path
    out: Path
    report: dict[str, Any]
    lab: ScriptedLab
    requests: int


@pytest.fixture(scope="session")
def sample_sources(sample_dir: Path) -> Path:
    return sample_dir / "sources"


@pytest.fixture(scope="session")
def lab_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(ScriptedLab()) as server:
        yield server


@pytest.fixture(scope="session")
def sample_build(sample_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SampleBuild]:
    lab = ScriptedLab()
    out = tmp_path_factory.mktemp("build") / "candidates"
    with LoopbackServer(lab) as server:
        report = run_build(sample_sources, out, server)
        yield SampleBuild(sample_sources, out, report, lab, len(server.requests))
