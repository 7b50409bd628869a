"""The end every recipe's `expvid build` shares: the audit gate, the last messages and the exit status.

A recipe's runner builds and returns a `BuiltRelease` (its output folder, the suite that reads it,
how many units failed); this module audits that release (`expvid.construction.release_gate`) and
decides the exit status, the same way for every recipe:

- 0: everything built, the audit gate passed;
- 1: some units failed (retry first: the release is incomplete); the gate still ran and is recorded;
- 2: bad input, including a reviewed exception file (`--accept-audit`) that is malformed or lists a
  solver the audit does not flag (file:line);
- 6: everything written, but the audit gate did not pass: a text-only solver beats chance on the
  release and no reviewed exception accepts it. The outputs are kept and marked (build_report.md,
  audit.md); fix the recipe and re-run (all answered calls come from the cache), or review the
  finding and pass `--accept-audit FILE`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from expvid.commands.errors import EXIT_PROBLEMS_FOUND, friendly_errors
from expvid.recipes.api import BuiltRelease
from expvid.run.terminal import message_console

if TYPE_CHECKING:
    from expvid.audit.gate import AcceptedFinding

console = message_console(stderr=True)


def read_accepted(path: Path | None) -> list[AcceptedFinding]:
    """The reviewed exceptions of `--accept-audit FILE`, read before the build starts (exit 2 with
    file:line when malformed: nothing is asked of a model before that is fixed)."""
    if path is None:
        return []
    from expvid.audit.gate import read_exceptions

    with friendly_errors():
        return read_exceptions(path.expanduser())


def finish_build(
    built: BuiltRelease | None,
    *,
    accept_audit: Path | None,
    exceptions: list[AcceptedFinding],
    quiet: bool,
) -> None:
    """Gate the release `built` (None: nothing was released, e.g. a dry run) and exit as documented."""
    if built is None:
        return
    if not built.released:
        console.print("audit gate: nothing was released, nothing to audit", highlight=False)
        if built.failed_units:
            raise typer.Exit(code=EXIT_PROBLEMS_FOUND)
        return
    from expvid.construction.progress_bars import build_progress
    from expvid.construction.release_gate import EXIT_GATE_FAILED, gate_release

    with friendly_errors(), build_progress(console, enabled=not quiet) as progress:
        verdict = gate_release(
            built.out,
            built.suite,
            exceptions=exceptions,
            exceptions_file=accept_audit.expanduser() if accept_audit else None,
            progress=progress,
        )
    where = escape(str(built.out / "audit.md"))
    if verdict.passed:
        accepted = (
            f"; {len(verdict.accepted)} finding(s) accepted by {escape(str(accept_audit))}"
            if verdict.accepted
            else ""
        )
        console.print(
            f"audit gate: passed ({verdict.flagged_items} of {verdict.items} item(s) flagged for review"
            f"{accepted}; {len(verdict.informational)} informational); see {where}",
            highlight=False,
        )
    else:
        for finding in verdict.blocking:
            console.print(f"[red]audit gate[/]: {escape(finding.describe())}", highlight=False)
        console.print(
            f"audit gate: NOT PASSED: {len(verdict.blocking)} text-only solver(s) beat chance on the release. "
            f"Everything is written and kept, marked in build_report.md and {where}. Fix what the recipe "
            "releases and run the same command again (answered calls come from the cache), or review each "
            "finding and pass --accept-audit FILE (docs/audit.md, 'The release gate').",
            highlight=False,
        )
    if built.failed_units:
        raise typer.Exit(code=EXIT_PROBLEMS_FOUND)
    if not verdict.passed:
        raise typer.Exit(code=EXIT_GATE_FAILED)
