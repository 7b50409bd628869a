"""`expvid eval-set CONFIG.yaml`: models x suites x settings in one command, resumable, one report."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from expvid.cli.common_options import Quiet
from expvid.commands.errors import (
    EXIT_BATCHES_PENDING,
    EXIT_BUDGET_REACHED,
    EXIT_INTERRUPTED,
    EXIT_ITEMS_FAILED,
    friendly_errors,
)
from expvid.run.terminal import message_console

if TYPE_CHECKING:
    from expvid.run.eval_set import PreparedCell
console = message_console(stderr=True)


def eval_set_command(
    config_file: Annotated[
        Path, typer.Argument(help="The campaign: out, suites (with settings) and models.")
    ],
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only", help="Run only cells whose id (suite/setting/model) contains this. Repeatable."
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print each cell's requests, tokens and cost; send and write nothing."
        ),
    ] = False,
    report_only: Annotated[
        bool,
        typer.Option("--report-only", help="Only write report.md and leaderboard.html from what exists."),
    ] = False,
    quiet: Quiet = False,
) -> None:
    """Run every model on every suite and setting of CONFIG.yaml; one table and a leaderboard at the end.

    One resumable run directory per cell (out/runs/SUITE/SETTING/MODEL), frames decoded once for all
    models, cells retried as a unit; then out/report.md and out/leaderboard.html. Re-running the
    command continues where it stopped.

    Exit status (as `expvid eval`'s, over all cells): 0 when every cell finished with an answer
    for every record; 5 when some cell has requests waiting in a provider's batches (run it again
    later); else 4 when some cell stopped at its budget; else 3 when some cell failed or finished
    with failed items; 2 for errors in the file; 130 when interrupted.
    """
    from expvid.run.eval_set import SetState, prepare_cells, read_state, run_eval_set
    from expvid.run.eval_set_config import load_eval_set
    from expvid.run.eval_set_report import SetReport, write_set_report
    from expvid.view.export import export_cell_views

    def report_on(state: SetState) -> SetReport:
        report = write_set_report(config, cells, state)
        if config.view_exports:
            export_cell_views(
                cells, config.out, frames=config.view_frames, cache_dir=config.cache_dir, console=console
            )
        return report

    with friendly_errors():
        config = load_eval_set(config_file)
        if config.cache_dir is None:
            from expvid.media.cache import default_cache_dir

            config = config.model_copy(update={"cache_dir": default_cache_dir()})
        cells = prepare_cells(config, only=only, resolve_data=_fetch)
        if dry_run:
            typer.echo(_dry_run(cells))
            return
        if report_only:
            report = report_on(read_state(config.out))
            typer.echo(report.markdown)
            return
        try:
            outcome = asyncio.run(run_eval_set(config, cells, console=console, show_progress=not quiet))
        except KeyboardInterrupt:
            console.print(
                f"[yellow]interrupted[/]: every cell keeps what it finished in {escape(str(config.out))}; "
                "re-run the same command to continue"
            )
            raise typer.Exit(code=EXIT_INTERRUPTED) from None
        report = report_on(outcome.state)
    typer.echo(report.markdown)
    statuses = {cell.cell.id: outcome.state.cells[cell.cell.id].status for cell in cells}
    unfinished = [cell_id for cell_id, status in statuses.items() if status != "done"]
    console.print(
        f"report: {escape(str(config.out / 'report.md'))}; leaderboard: {escape(str(config.out / 'leaderboard.html'))}"
    )
    if unfinished:
        code = set_exit_status(statuses.values())
        console.print(
            f"[yellow]{len(unfinished)} cell(s) not done[/]: "
            + ", ".join(f"{escape(cell_id)} ({statuses[cell_id]})" for cell_id in unfinished)
            + f"; exit status {code}"
        )
        raise typer.Exit(code=code)


def set_exit_status(statuses: Iterable[str]) -> int:
    """The campaign's exit status from its cells' states: "not finished" (batches waiting, then a
    budget stop) wins over failures, which are final only once every cell has finished."""
    seen = set(statuses)
    if "waiting" in seen:
        return EXIT_BATCHES_PENDING
    if "stopped" in seen:
        return EXIT_BUDGET_REACHED
    if seen - {"done"}:
        return EXIT_ITEMS_FAILED
    return 0


def _fetch(data: str, suite: str, tasks: list[str] | None, settings: dict[str, Any]) -> Path:
    from expvid.hub.dataspec import resolve_data
    from expvid.media.cache import default_cache_dir

    root, _ = resolve_data(
        data,
        suite=suite,
        tasks=tasks,
        settings=settings,
        cache_root=default_cache_dir(),
        echo=lambda line: console.print(line, highlight=False, markup=False),
    )
    return root


def _dry_run(cells: list[PreparedCell]) -> str:
    from expvid.run.estimate import estimate_run

    lines = [
        "Dry run of the evaluation set: nothing was sent or written.",
        "",
        "| cell | requests | images | input tokens | output tokens (est.) | est. USD | max USD |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    total: float | None = 0.0
    total_max: float | None = 0.0
    for prepared in cells:
        estimate = estimate_run(prepared.config).total
        usd = "unknown" if estimate.usd is None else f"{estimate.usd:.2f}"
        usd_max = "unknown" if estimate.usd_max is None else f"{estimate.usd_max:.2f}"
        inputs = f"{estimate.input_tokens}" + (
            "" if estimate.image_tokens is not None else " + images (no rule)"
        )
        lines.append(
            f"| {prepared.cell.id} | {estimate.requests} | {estimate.images} | {inputs} | "
            f"{estimate.output_tokens} | {usd} | {usd_max} |"
        )
        total = None if total is None or estimate.usd is None else total + estimate.usd
        total_max = None if total_max is None or estimate.usd_max is None else total_max + estimate.usd_max
    shown = "unknown (some cells have no price)" if total is None else f"${total:.2f}"
    shown_max = "unknown" if total_max is None else f"${total_max:.2f}"
    lines += ["", f"- estimated total: {shown} (every request at its full max_tokens: {shown_max})"]
    return "\n".join(lines) + "\n"
