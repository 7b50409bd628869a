"""Typer options that several commands declare alike, written once so that their flag and help stay
the same everywhere. Imports only Typer: `--help` must start fast (tests/cli/test_startup.py)."""

from __future__ import annotations

from typing import Annotated

import typer

#: `--quiet` of the commands that draw progress bars (eval, eval-set, audit, data fetch, demo).
Quiet = Annotated[bool, typer.Option("--quiet", help="No progress bars.")]
#: `--tasks` of the commands that run or audit some of a benchmark's tasks (eval, audit).
TaskNames = Annotated[str | None, typer.Option("--tasks", help="Comma-separated task names (default: all).")]
