"""`expvid batches list RUN` / `expvid batches cancel RUN`: a run's batches at its provider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from expvid.commands.errors import friendly_errors

batches_app = typer.Typer(
    no_args_is_help=True, help="List or cancel a run's batches at its provider (runs made with --batch)."
)

RunArgument = Annotated[Path, typer.Argument(help="A run directory made with --batch.", metavar="RUN")]


@batches_app.callback()
def _batches() -> None:
    """List or cancel a run's batches at its provider (runs made with --batch)."""


@batches_app.command("list")
def list_command(
    run: RunArgument,
    offline: Annotated[
        bool,
        typer.Option("--offline", help="Show what the run directory recorded; ask the provider nothing."),
    ] = False,
) -> None:
    """Each batch of RUN: provider, id, status now, requests and their counts, cost of its answers so far."""
    from expvid.run.batch_inventory import batches_markdown, list_batches

    with friendly_errors():
        lines = asyncio.run(list_batches(run, poll=not offline))
    typer.echo(batches_markdown(lines))


@batches_app.command("cancel")
def cancel_command(run: RunArgument) -> None:
    """Cancel every batch of RUN that has not ended; the next `expvid eval` merges what already ran."""
    from expvid.run.batch_inventory import cancel_batches

    with friendly_errors():
        done = asyncio.run(cancel_batches(run))
    for batch_id, status in done:
        typer.echo(f"{batch_id}: {status}")
    if not done:
        typer.echo("no batch of this run is still running")
    else:
        typer.echo("re-run the same `expvid eval` command to merge what ran and ask the rest again")
