"""What `expvid eval` does once its options are parsed: configure, run, print the table, exit."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import typer
from rich.markup import escape

from expvid.commands.errors import (
    EXIT_BATCHES_PENDING,
    EXIT_BUDGET_REACHED,
    EXIT_INTERRUPTED,
    EXIT_ITEMS_FAILED,
    friendly_errors,
)
from expvid.run.terminal import message_console

console = message_console(stderr=True)


def run_eval(given: dict[str, Any]) -> None:
    """Run `expvid eval` with the command's parameters (`given`, by parameter name)."""
    from expvid.media.cache import default_cache_dir
    from expvid.run.eval_options import EvalOptions, OptionError
    from expvid.run.evaluate import evaluate, make_suite_named
    from expvid.run.report import build_table, load_runs, to_markdown

    quiet = bool(given.pop("quiet"))
    allow_failures = bool(given.pop("allow_failures"))
    dry_run = bool(given.pop("dry_run", False))
    lists = {
        key: given[key] or []
        for key in ("base_url", "backend_option", "suite_option", "price", "batch_option")
    }
    options = EvalOptions(**{**given, **lists})
    echo = lambda line: console.print(line, highlight=False, markup=False)  # noqa: E731
    try:
        with friendly_errors():
            config = options.to_config(default_cache=default_cache_dir(), echo=echo)
    except OptionError as error:
        raise typer.BadParameter(str(error), param_hint=error.flag) from None
    if dry_run:
        from expvid.run.estimate import estimate_markdown, estimate_run

        with friendly_errors():
            typer.echo(estimate_markdown(estimate_run(config)))
        return
    try:
        with friendly_errors():
            result = asyncio.run(evaluate(config, command=sys.argv, console=console, show_progress=not quiet))
    except KeyboardInterrupt:
        console.print(
            f"[yellow]interrupted[/]: finished items are saved in {escape(str(config.out))}; "
            "re-run the same command to resume"
        )
        raise typer.Exit(code=EXIT_INTERRUPTED) from None
    if result.pending:
        console.print(
            f"{result.pending} request(s) are waiting in the provider's batches (ids in "
            f"{escape(str(config.out / 'batches'))}); re-run the same command to collect them"
        )
    with friendly_errors():
        suite = make_suite_named(config.suite, config.suite_settings)
    typer.echo(to_markdown(build_table(suite, load_runs([config.out]), references=[])))
    console.print(
        f"{result.generated} item(s) run, {result.resumed} reused from the run directory, "
        f"{result.failed} failed"
        + (f", {result.not_sent} not sent (budget)" if result.not_sent else "")
        + f"; scores in {escape(str(result.rundir.scores_path))}"
    )
    if result.pending:
        console.print(
            f"[yellow]not finished[/]: {result.pending} request(s) still in the provider's batches; "
            f"exit status {EXIT_BATCHES_PENDING} (run the same command later to collect them)"
        )
        raise typer.Exit(code=EXIT_BATCHES_PENDING)
    if result.stopped is not None:
        console.print(
            f"[yellow]not finished[/]: stopped at the budget; exit status {EXIT_BUDGET_REACHED} "
            "(the same command with a larger --max-cost / --max-tokens-total continues)"
        )
        raise typer.Exit(code=EXIT_BUDGET_REACHED)
    if result.n_problems and not allow_failures:
        console.print(
            f"[yellow]{result.n_problems} record(s) scored 0 without a model answer[/] (see the notes above); "
            f"exit status {EXIT_ITEMS_FAILED} (--allow-failures for 0)"
        )
        raise typer.Exit(code=EXIT_ITEMS_FAILED)
