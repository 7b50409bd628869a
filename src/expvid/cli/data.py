"""`expvid data ...`: inspect and validate benchmark data before spending model time on it.

`expvid data check DIR` counts every task's records and lists what an evaluation would score 0:
invalid records (`file:line: message`), missing and unreadable media (`path: problem`). It exits 1
when it finds any, so `expvid data check DIR && expvid eval ...` runs only on clean data.
`expvid data validate` is the older ExpVid-only form: the same report, failing only with --strict.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from expvid.cli.common_options import Quiet, TaskNames, comma_names
from expvid.cli.suite_flags import DEFAULT_SUITE, SuiteCommand, suite_option_flag, suite_settings
from expvid.commands.errors import friendly_errors
from expvid.run.terminal import message_console, print_table

if TYPE_CHECKING:  # the checks load the suites (numpy, PyAV): only when a command runs
    from expvid.suites.check import DataCheck

data_app = typer.Typer(no_args_is_help=True, help="Inspect and validate benchmark data.")


class MediaMode(StrEnum):
    read = "read"
    decode = "decode"
    exists = "exists"
    none = "none"


@data_app.callback()
def _data() -> None:
    """Inspect and validate benchmark data."""


DirArgument = Annotated[
    Path,
    typer.Argument(help="Dataset root (a release in the suite's layout).", metavar="DIR", show_default=False),
]


@data_app.command("check", cls=SuiteCommand)
def check(
    directory: DirArgument,
    suite: Annotated[str, typer.Option("--suite", help="Benchmark suite of DIR.")] = DEFAULT_SUITE,
    tasks: TaskNames = None,
    media: Annotated[
        MediaMode,
        typer.Option(
            "--media",
            help="read (default): open every video and read all its packets, verify every image (finds "
            "missing, unreadable and cut-short files; nothing is decoded); decode: also decode every frame "
            "(slow; finds damaged sections inside a video); exists: only check the files are there; "
            "none: skip media.",
        ),
    ] = MediaMode.read,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
) -> None:
    """Count DIR's records per task; list invalid records and missing or unreadable media.

    Exit status: 0 when every record is usable and every media file readable, 1 when something
    would be scored 0 by an evaluation (listed above the summary), 2 when DIR cannot be read.
    """
    options = suite_settings(suite_option)
    with friendly_errors():
        report = _check(directory, suite, tasks, media, options)
    _print(report)
    if not report.ok:
        raise typer.Exit(code=1)


@data_app.command("validate")
def validate(
    directory: DirArgument,
    tasks: TaskNames = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with status 1 if any record has a problem.")
    ] = False,
    check_media: Annotated[
        bool,
        typer.Option("--check-media/--no-check-media", help="Check that every record's video file exists."),
    ] = True,
) -> None:
    """Load DIR as a release of the default suite and report records, items and problems per task.

    Problems are printed as `file:line: message`, one per line, so editors and grep can jump to them.
    """
    media = MediaMode.exists if check_media else MediaMode.none
    with friendly_errors():
        report = _check(directory, DEFAULT_SUITE, tasks, media, {})
    _print(report)
    if strict and not report.ok:
        typer.echo(f"{_problem_count(report)} problem(s); failing because of --strict", err=True)
        raise typer.Exit(code=1)


def _check(
    directory: Path, suite: str, tasks: str | None, media: MediaMode, options: dict[str, object]
) -> DataCheck:
    from expvid.run.evaluate import make_suite_named
    from expvid.suites.check import check_dataset

    the_suite = make_suite_named(suite, options)
    dataset = the_suite.load(directory, tasks=comma_names(tasks), strict=False)
    return check_dataset(dataset, media.value)


def _problem_count(report: DataCheck) -> int:
    return len(report.dataset.problems) + len(report.media_problems)


def _print(report: DataCheck) -> None:
    dataset = report.dataset
    console = message_console()
    columns = ("task", "level", "records", "items", "invalid", "media missing", "media unreadable")
    table = Table(title=f"{dataset.suite} data check")
    for column in columns:
        table.add_column(column, justify="left" if column == "task" else "right", no_wrap=True)
    totals = [0, 0, 0, 0, 0]
    for row in report.tasks:
        values = [row.records, row.items, row.invalid, row.media_missing, row.media_unreadable]
        totals = [a + b for a, b in zip(totals, values, strict=True)]
        level = "" if row.level is None else str(row.level)
        table.add_row(row.task, level, *(str(v) for v in values))
    table.add_row("total", "", *(str(v) for v in totals))
    print_table(console, table)
    console.print(f"dataset {dataset.root}", markup=False)
    media_note = {
        "read": "media read: packets, not decoded (--media decode decodes every frame)",
        "decode": "media decoded frame by frame",
        "exists": "media checked for presence",
        "none": "media not checked",
    }
    console.print(
        f"fingerprint {dataset.fingerprint()} (annotations and media; {media_note[report.media_check]})"
    )
    for problem in dataset.problems:
        console.print(str(problem), markup=False)
    for media_problem in report.media_problems:
        console.print(str(media_problem), markup=False)
    console.print(_summary(report), markup=False)


def _summary(report: DataCheck) -> str:
    if report.ok:
        return "no problems: every record is usable" + (
            "" if report.media_check == "none" else " and its media there"
        )
    parts = []
    if report.dataset.invalid:
        parts.append(f"{report.n_invalid} invalid record(s)")
    if report.unattributed:
        parts.append(f"{len(report.unattributed)} of them of unknown task")
    if report.unreadable_files:
        parts.append(
            f"{len(report.unreadable_files)} file(s) that cannot be read to the end (records not countable)"
        )
    missing = sum(1 for problem in report.media_problems if problem.missing)
    unreadable = len(report.media_problems) - missing
    if missing:
        parts.append(f"{missing} media file(s) missing")
    if unreadable:
        parts.append(f"{unreadable} media file(s) unreadable")
    other = len(report.dataset.problems) - report.n_invalid - len(report.unreadable_files)
    if other:
        parts.append(f"{other} other problem(s)")
    return (
        "; ".join(parts) + ". `expvid eval` scores invalid records and items without readable media 0 "
        "and counts them (and refuses files whose records cannot be counted)."
    )


@data_app.command("fetch", cls=SuiteCommand)
def fetch(
    suite: Annotated[
        str, typer.Argument(help="The suite (`expvid suites list`).", metavar="SUITE", show_default=False)
    ],
    directory: Annotated[
        Path, typer.Argument(help="Where the release goes (created; re-run to resume).", metavar="DIR")
    ],
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Comma-separated tasks (default: all); only their media are fetched."),
    ] = None,
    levels: Annotated[
        str | None, typer.Option("--levels", help="Levels whose tasks to fetch, e.g. 1,2.")
    ] = None,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
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
    quiet: Quiet = False,
) -> None:
    """Download a suite's published release (from the Hugging Face Hub, or where the suite keeps it) and verify it.

    Only the selected tasks' annotation files and the media their questions use are downloaded. The
    resolved commit is written to DIR/fetch.json (copied into every run manifest by `expvid eval`).
    Exit status: 0 complete, 1 downloaded but incomplete (problems listed), 2 could not fetch.
    """
    from expvid.hub.fetch import FetchError, FetchRequest, fetch_release
    from expvid.schema import DataError

    try:
        level_numbers = [int(v.upper().removeprefix("L")) for v in comma_names(levels) or []] or None
    except ValueError:
        raise typer.BadParameter(
            f"expected level numbers like 1,2 (got {levels!r})", param_hint="--levels"
        ) from None
    request = FetchRequest(
        suite=suite,
        out=directory,
        repo_id=repo,
        revision=revision,
        tasks=comma_names(tasks),
        levels=level_numbers,
        settings=suite_settings(suite_option),
        endpoint=endpoint,
        probe=probe,
        max_workers=workers,
        progress=not quiet,
    )
    console = message_console(stderr=True)
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
