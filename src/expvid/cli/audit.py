"""`expvid audit`: the validity audit of a release (text-only shortcut solvers, item checks, and
controls and item analysis from runs); writes audit.json, audit.md and audit.html.

Exit status: 0 when the audit ran (whatever it found); 1 with `--fail-on-flag` when a solver or an
item is flagged (release gates, CI); 2 on bad input, one line naming the file or option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.common_options import DataSpec, HubCacheDir, Quiet, TaskNames
from expvid.cli.suite_flags import SuiteCommand, SuiteOfData, suite_option_flag


def audit_command(
    data: DataSpec,
    out: Annotated[Path, typer.Option("--out", help="Folder for audit.json, audit.md and audit.html.")],
    suite: SuiteOfData = None,
    runs: Annotated[
        list[Path] | None,
        typer.Option(
            "--runs",
            help="Run directories of the same release (or folders of runs, e.g. an eval-set's output), "
            "repeatable: controls (--frames-control runs) and item analysis across models.",
        ),
    ] = None,
    tasks: TaskNames = None,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
    embeddings: Annotated[
        bool,
        typer.Option(
            "--embeddings/--no-embeddings",
            help="Also compare options by MiniLM sentence embeddings for near-duplicates (normal forms and "
            "values are always compared).",
        ),
    ] = True,
    fail_on_flag: Annotated[
        bool, typer.Option("--fail-on-flag", help="Exit 1 when any solver or item is flagged.")
    ] = False,
    cache_dir: HubCacheDir = None,
    quiet: Quiet = False,
) -> None:
    """Audit a release: can its items be answered without the video? Writes audit.json, audit.md, audit.html.

    Exit status: 0 when the audit ran; 1 with --fail-on-flag when anything is flagged; 2 on bad input.
    """
    from expvid.cli.audit_run import run_audit

    run_audit(
        data=data,
        out=out,
        suite=suite,
        runs=runs or [],
        tasks=tasks,
        suite_option=suite_option or [],
        embeddings=embeddings,
        fail_on_flag=fail_on_flag,
        cache_dir=cache_dir,
        quiet=quiet,
    )


audit_command.command_class = SuiteCommand  # type: ignore[attr-defined]
