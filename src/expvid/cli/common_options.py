"""Typer options that several commands declare alike, written once so that their flag and help stay
the same everywhere. Imports only Typer: `--help` must start fast (tests/cli/test_startup.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

#: `--quiet` of the commands that draw progress bars (eval, eval-set, audit, score, data fetch, demo).
Quiet = Annotated[bool, typer.Option("--quiet", help="No progress bars.")]
#: `--tasks` of the commands that run, audit, check or export some of a release's tasks.
TaskNames = Annotated[
    str | None, typer.Option("--tasks", help="Comma-separated task names (default: all present).")
]
#: `--seed` of the commands whose sampling it fixes (build, eval, compare).
Seed = Annotated[int, typer.Option("--seed")]
#: `--concurrency` of the commands that ask a model (build, eval).
Concurrency = Annotated[int, typer.Option("--concurrency", min=1, help="Model requests in flight.")]

#: `--data` of the commands that read a release or fetch one from the Hub first (eval, audit,
#: export lmms-eval).
DataSpec = Annotated[
    str,
    typer.Option(
        "--data", help="Dataset root (a suite's release layout), or hf:ORG/NAME[@REV] to fetch it first."
    ),
]
#: `--cache-dir` of the commands that only fetch hf: releases there (audit, export lmms-eval).
HubCacheDir = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Where hf: releases are fetched (default ~/.cache/expvid)."),
]

#: `--judge` of the commands that score (eval, score).
JudgeSpec = Annotated[
    str | None, typer.Option("--judge", help="LLM judge spec (default: the suite's offline judge).")
]
#: `--allow-failures` of the commands that exit 3 for records scored 0 without an answer (eval, score).
AllowFailures = Annotated[
    bool,
    typer.Option(
        "--allow-failures",
        help="Exit 0 even when records scored 0 without a model answer or a judgement (failed items, "
        "invalid records).",
    ),
]

#: The frames a model is shown, sampled alike by `eval` and `export inspect` (`--max-frames`: also `frames`).
FrameCounts = Annotated[
    str | None,
    typer.Option("--frames", help="Frames per level or task, e.g. L1=8,L2=32,L3=128 (F.2 defaults)."),
]
Fps = Annotated[float | None, typer.Option("--fps", help="Sample at this rate instead of N frames.")]
MaxFrames = Annotated[int | None, typer.Option("--max-frames", help="Cap for --fps sampling.")]
FrameSize = Annotated[
    int | None,
    typer.Option(
        "--size",
        min=0,
        help="Square frame side (ExpVid F.2: 224); 0 keeps the source size. Default: the paper's.",
    ),
]
MaxSide = Annotated[
    int | None,
    typer.Option(
        "--max-side", min=0, help="Keep the aspect ratio, longest side at most N px (0: source size)."
    ),
]


def comma_names(text: str | None) -> list[str] | None:
    """A comma-separated option's names (`--tasks a, b`), blanks dropped; None when not given."""
    return [name.strip() for name in text.split(",") if name.strip()] if text else None
