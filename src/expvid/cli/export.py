"""`expvid export ...`: hand a benchmark to another evaluation tool (lmms-eval, Inspect AI)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.common_options import (
    DataSpec,
    Fps,
    FrameCounts,
    FrameSize,
    HubCacheDir,
    MaxSide,
    TaskNames,
    comma_names,
)
from expvid.cli.suite_flags import DEFAULT_SUITE, SuiteCommand, suite_option_flag, suite_settings

#: The suite both exports take alike.
SuiteName = Annotated[str, typer.Option("--suite", help="The benchmark's suite (`expvid suites list`).")]

export_app = typer.Typer(no_args_is_help=True, help="Export a benchmark for other evaluation tools.")


@export_app.callback()
def _export() -> None:
    """Export a benchmark for other evaluation tools."""


@export_app.command("lmms-eval", cls=SuiteCommand)
def lmms_eval(
    out: Annotated[Path, typer.Argument(help="Folder for the task package (created).", metavar="DIR")],
    data: DataSpec,
    suite: SuiteName = DEFAULT_SUITE,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
    tasks: TaskNames = None,
    prefix: Annotated[
        str | None,
        typer.Option(
            "--prefix",
            help="lmms-eval task and group name prefix (default: expvid, or expvid_<suite>: never one of lmms-eval's own names).",
        ),
    ] = None,
    hub_id: Annotated[
        str | None,
        typer.Option(
            "--hub-id", help="Load the questions from this Hub dataset (configs level1_tools, ...)."
        ),
    ] = None,
    revision: Annotated[
        str | None, typer.Option("--revision", help="With --hub-id: the revision to pin.")
    ] = None,
    cache_dir: HubCacheDir = None,
) -> None:
    """Write an lmms-eval task package: one YAML per task, level groups, utils.py calling expvid's scoring."""
    from expvid.commands.errors import friendly_errors
    from expvid.export.lmms_eval import write_lmms_eval_package

    names = comma_names(tasks)
    settings = suite_settings(suite_option)
    with friendly_errors():
        root = Path(data)
        if data.startswith("hf:"):
            from expvid.hub.dataspec import resolve_data
            from expvid.hub.record import read_fetch_record
            from expvid.media.cache import default_cache_dir

            root, suite = resolve_data(
                data, suite=suite, tasks=names, settings=settings, cache_root=cache_dir or default_cache_dir(),
                echo=lambda line: typer.echo(line, err=True),
            )  # fmt: skip
            record = read_fetch_record(root)
            if record is not None and _one_file_per_task(suite):  # the card has a config per task file
                hub_id = hub_id or record.source.repo
                revision = revision or record.revision
        try:
            report = write_lmms_eval_package(
                out, root, suite=suite, settings=settings, tasks=names, prefix=prefix, hub_id=hub_id,
                revision=revision,
            )  # fmt: skip
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None
    typer.echo(f"wrote {len(report.tasks)} task(s) and {len(report.groups)} group(s) to {report.out}")
    typer.echo(
        f"run: lmms-eval --tasks {report.prefix} --include_path {report.out} --log_samples --output_path logs/ ..."
    )


@export_app.command("inspect", cls=SuiteCommand)
def inspect(
    data: Annotated[Path, typer.Argument(help="The benchmark (the suite's release layout).", metavar="DATA")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the task package (created).")],
    suite: SuiteName = DEFAULT_SUITE,
    suite_option: Annotated[list[str] | None, suite_option_flag()] = None,
    tasks: TaskNames = None,
    frames: FrameCounts = None,
    fps: Fps = None,
    size: FrameSize = None,
    max_side: MaxSide = None,
) -> None:
    """Write an Inspect AI task package: the items' messages with frames sampled once by expvid, and the
    suite's scorer; `inspect eval` runs it and `expvid score --from inspect LOGDIR` scores its logs."""
    from expvid.commands.errors import friendly_errors
    from expvid.export.inspect import write_inspect_package
    from expvid.run.config import parse_frame_counts
    from expvid.suites.protocol import FrameOptions

    names = comma_names(tasks)
    settings = suite_settings(suite_option)
    if size is not None and max_side is not None:
        raise typer.BadParameter("give --size or --max-side, not both", param_hint="--max-side")
    try:
        counts = parse_frame_counts(frames) if frames else {}
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--frames") from None
    output: dict[str, int | None] = {}
    if size is not None:
        output = {"size": size or None, "max_side": None}
    elif max_side is not None:
        output = {"size": None, "max_side": max_side or None}
    with friendly_errors():
        try:
            report = write_inspect_package(
                out, data, suite=suite, settings=settings, tasks=names,
                frames=FrameOptions(counts=counts, fps=fps, **output),
            )  # fmt: skip
        except ValueError as error:
            raise typer.BadParameter(str(error)) from None
    typer.echo(
        f"wrote {report.samples} sample(s) with {report.frames} frame(s) to {report.out}"
        + (
            f"; {len(report.left_out)} item(s) left out (media not readable, see export.json)"
            if report.left_out
            else ""
        )
    )
    typer.echo(
        f"run: pip install {report.out} && inspect eval {report.registry_name} --model ... --log-dir logs/"
    )
    typer.echo("then: expvid score --from inspect logs/")


def _one_file_per_task(suite: str) -> bool:
    from expvid.suites.registry import suite_class

    paths = [spec.path for spec in suite_class(suite).tasks]
    return len(set(paths)) == len(paths)
