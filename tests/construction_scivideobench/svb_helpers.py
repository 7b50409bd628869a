"""Shared by the SciVideoBench recipe tests: the session build's record and the CLI arguments that make it.

Kept out of conftest.py so that test modules import it by a unique name (two `conftest` modules would
shadow each other in `sys.modules`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from svb_lab import SvbLab

from expvid.fakes.models.server import LoopbackServer
from expvid.fakes.transcription import TranscriptionServer


@dataclass
class SvbBuild:
    sources: Path
    out: Path
    report: dict[str, Any]
    lab: SvbLab
    llm: LoopbackServer
    stt: TranscriptionServer
    args: list[str]
    output: str
    #: Transcriptions the fixture's own build sent (the server is shared: later tests add theirs).
    transcribed_by_build: int = 0


def build_args(sources: Path, out: Path, llm: LoopbackServer, stt: TranscriptionServer) -> list[str]:
    return [
        "build", str(sources), "--recipe", "scivideobench", "--out", str(out),
        # The server as --base-url and retries as --backend-option: the endpoint options `eval` takes.
        "--llm", "openai:lab-r1", "--base-url", llm.openai_base_url, "--price", "llm=1.25,10",
        "--blind-samples", "1", "--backend-option", "max_retries=0", "--quiet",
        "-R", f"stt=openai:whisper-1@{stt.openai_base_url}", "-R", "stt_price=0.006",
        "-R", "per_type=conceptual:1,hypothetical:2,quantitative:1", "-R", "frames=4", "-R", "frame_max_side=128",
    ]  # fmt: skip
