"""Fixtures for the SciVideoBench recipe: narrated sources without transcripts (espeak-ng), the
scripted lab, and one build through the CLI (session-scoped, shared by the tests that only read it)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from svb_helpers import SvbBuild, build_args
from svb_lab import SvbLab

from expvid.fakes.models.server import LoopbackServer
from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer


def _require_espeak() -> None:
    if shutil.which("espeak-ng") is None:
        message = "espeak-ng is not installed (apt-get install -y espeak-ng)"
        if os.environ.get("EXPVID_REQUIRE_ESPEAK") == "1":
            pytest.fail(message + " and EXPVID_REQUIRE_ESPEAK=1")
        pytest.skip(message)


@pytest.fixture(scope="session")
def speech_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _require_espeak()
    from expvid.suites.sample.speech_sources import make_speech_sources

    root = tmp_path_factory.mktemp("svb_inputs") / "sample"
    make_speech_sources(root, experiments=2)
    return root / "sources"


@pytest.fixture(scope="session")
def svb_build(speech_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SvbBuild]:
    import json

    from typer.testing import CliRunner

    from expvid.cli.main import app

    lab = SvbLab()
    out = tmp_path_factory.mktemp("svb_build") / "candidates"
    with LoopbackServer(lab) as llm, TranscriptionServer(TranscriptionScript()) as stt:
        args = build_args(speech_sources, out, llm, stt)
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
        yield SvbBuild(
            speech_sources, out, report, lab, llm, stt, args, result.output, len(stt.transcriptions)
        )
