"""`expvid sample ...`: generate the bundled sample benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from expvid.suites.sample import SampleDirectoryError, make_sample

sample_app = typer.Typer(no_args_is_help=True, help="Generate the bundled sample benchmarks.")


@sample_app.callback()
def _sample() -> None:
    """Generate the bundled sample benchmarks."""


@sample_app.command("make")
def make(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Where to write the sample (a new or empty directory).", metavar="DIR", show_default=False
        ),
    ],
    seed: Annotated[int, typer.Option("--seed", help="Same seed -> identical annotations and truth.")] = 0,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a sample previously generated in DIR.")
    ] = False,
) -> None:
    """Write a small ExpVid-format benchmark of synthetic lab videos, raw sources and a truth sidecar."""
    try:
        summary = make_sample(directory, seed=seed, force=force)
    except SampleDirectoryError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    table = Table(title=f"Sample ExpVid benchmark in {summary.root} (seed {summary.seed})")
    table.add_column("task")
    table.add_column("items", justify="right")
    for task, count in summary.items.items():
        table.add_row(task, str(count))
    table.add_row("total", str(summary.total_items))
    console = Console()
    console.print(table)
    console.print(
        f"{len(summary.experiments)} experiments in the release, {len(summary.rejected)} raw sources for "
        f"curation to reject, {summary.clips} video files; {summary.seconds:.1f} s",
        highlight=False,
    )
