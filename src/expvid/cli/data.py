"""`expvid data ...`: inspect and validate benchmark data before spending model time on it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from expvid.schema import DataError
from expvid.suites.expvid_suite import EXPVID_TASKS, load_expvid

data_app = typer.Typer(no_args_is_help=True, help="Inspect and validate benchmark data.")


@data_app.callback()
def _data() -> None:
    """Inspect and validate benchmark data."""


@data_app.command("validate")
def validate(
    directory: Annotated[
        Path,
        typer.Argument(help="Dataset root in the ExpVid release layout.", metavar="DIR", show_default=False),
    ],
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Comma-separated task names (default: all present).")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with status 1 if any record has a problem.")
    ] = False,
    check_media: Annotated[
        bool,
        typer.Option("--check-media/--no-check-media", help="Check that every record's video file exists."),
    ] = True,
) -> None:
    """Load DIR as an ExpVid release and report items, disciplines and problems per task.

    Problems are printed as `file:line: message`, one per line, so editors and grep can jump to them.
    """
    requested = [name.strip() for name in tasks.split(",") if name.strip()] if tasks else None
    try:
        dataset = load_expvid(directory, tasks=requested, strict=False, check_media=check_media)
    except DataError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None

    problems_per_file = Counter(problem.path for problem in dataset.problems)
    by_task = dataset.by_task()
    table = Table(title=f"ExpVid data at {dataset.root}")
    for column in ("task", "level", "items", "disciplines", "problems"):
        table.add_column(column, justify="left" if column == "task" else "right")
    shown = [spec for spec in EXPVID_TASKS if spec in dataset.tasks or (requested and spec.name in requested)]
    for spec in shown:
        items = by_task.get(spec.name, [])
        disciplines = len({item.discipline for item in items if item.discipline})
        problems = problems_per_file.get(dataset.root / spec.path, 0)
        table.add_row(spec.name, str(spec.level), str(len(items)), str(disciplines), str(problems))
    table.add_row(
        "total",
        "",
        str(len(dataset)),
        str(len({i.discipline for i in dataset if i.discipline})),
        str(len(dataset.problems)),
    )
    console = Console()
    console.print(table)
    console.print(f"fingerprint {dataset.fingerprint()}", highlight=False)
    for problem in dataset.problems:
        typer.echo(str(problem))
    if strict and dataset.problems:
        typer.echo(f"{len(dataset.problems)} problem(s); failing because of --strict", err=True)
        raise typer.Exit(code=1)
