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


@data_app.command("fetch")
def fetch(
    suite: Annotated[
        str, typer.Argument(help="expvid, scivideobench, sfe or promqa.", metavar="SUITE", show_default=False)
    ],
    directory: Annotated[
        Path, typer.Argument(help="Where the release goes (created; re-run to resume).", metavar="DIR")
    ],
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Comma-separated tasks (default: all); only their media are fetched."),
    ] = None,
    levels: Annotated[str | None, typer.Option("--levels", help="ExpVid levels, e.g. 1,2.")] = None,
    language: Annotated[
        str | None, typer.Option("--language", help="SFE: en, zh or both (default en).")
    ] = None,
    revision: Annotated[str, typer.Option("--revision", help="Branch, tag or commit sha to pin.")] = "main",
    repo: Annotated[
        str | None, typer.Option("--repo", help="Another Hub id (a fork or mirror) with the same layout.")
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option("--endpoint", help="Hub endpoint (default: HF_ENDPOINT, else huggingface.co)."),
    ] = None,
    probe: Annotated[
        bool, typer.Option("--probe/--no-probe", help="Open every video and image after the download.")
    ] = True,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Files downloaded at once.")] = 8,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bars.")] = False,
) -> None:
    """Download a suite's published release (Hugging Face Hub; ProMQA from GitHub) and verify it.

    Only the selected tasks' annotation files and the media their questions use are downloaded. The
    resolved commit is written to DIR/fetch.json (copied into every run manifest by `expvid eval`).
    Exit status: 0 complete, 1 downloaded but incomplete (problems listed), 2 could not fetch.
    """
    from expvid.hub.fetch import FetchError, FetchRequest, fetch_release

    def names(text: str | None) -> list[str] | None:
        return [part.strip() for part in text.split(",") if part.strip()] if text else None

    try:
        level_numbers = [int(v.upper().removeprefix("L")) for v in names(levels) or []] or None
    except ValueError:
        raise typer.BadParameter(
            f"expected level numbers like 1,2 (got {levels!r})", param_hint="--levels"
        ) from None
    languages = ["en", "zh"] if language == "both" else names(language)
    request = FetchRequest(
        suite=suite,
        out=directory,
        repo_id=repo,
        revision=revision,
        tasks=names(tasks),
        levels=level_numbers,
        languages=languages,
        endpoint=endpoint,
        probe=probe,
        max_workers=workers,
        progress=not quiet,
    )
    console = Console(stderr=True)
    try:
        outcome = fetch_release(
            request, echo=lambda line: console.print(line, highlight=False, markup=False, soft_wrap=True)
        )
    except (FetchError, DataError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code=2) from None
    record = outcome.record
    typer.echo(f"{record.suite} {record.source.repo} @ {record.revision} ({record.revision_requested})")
    typer.echo(
        f"{record.verification.items} item(s) in {len(record.tasks)} task(s); {record.files} file(s), "
        f"{record.bytes / 1e6:.1f} MB; media readable {record.verification.media_readable}"
    )
    for problem in outcome.problems:
        typer.echo(f"problem: {problem}")
    typer.echo(f"wrote {outcome.root / 'fetch.json'}")
    if not outcome.complete:
        typer.echo(
            f"incomplete: {len(outcome.problems)} problem(s); re-run to retry the missing files", err=True
        )
        raise typer.Exit(code=1)
