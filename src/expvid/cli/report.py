"""`expvid report` and `expvid compare`: the paper's table for runs, and a paired test between two."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.common_options import Seed
from expvid.commands.errors import friendly_errors
from expvid.run.report import build_table, load_runs, to_csv, to_html, to_markdown
from expvid.schema import DataError
from expvid.suites.registry import get_suite


def report_command(
    runs: Annotated[list[Path], typer.Argument(help="One or more run directories.")],
    html: Annotated[
        Path | None, typer.Option("--html", help="Write a self-contained HTML report here.")
    ] = None,
    csv: Annotated[Path | None, typer.Option("--csv", help="Write the table as CSV here.")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write the Markdown table here.")
    ] = None,
    reference: Annotated[
        str,
        typer.Option(
            "--reference", help="Published rows to add: 'all', 'none', or comma-separated model names."
        ),
    ] = "none",
    title: Annotated[str | None, typer.Option("--title")] = None,
    analysis: Annotated[
        str | None,
        typer.Option(
            "--analysis",
            help="Instead of the table, an analysis the runs' suite computes across runs "
            "(`expvid suites show NAME` lists them).",
        ),
    ] = None,
    self_preference: Annotated[
        bool,
        typer.Option("--self-preference", help="Short for --analysis self-preference."),
    ] = False,
) -> None:
    """Print the paper-layout table for RUNS (Markdown) and optionally write CSV and HTML."""
    if self_preference:
        analysis = analysis or "self-preference"
    if analysis is not None:
        with friendly_errors():
            text = run_analysis(runs, analysis)
        typer.echo(text)
        if markdown:
            markdown.write_text(text, encoding="utf-8")
        return
    with friendly_errors():
        loaded = load_runs(runs)
        suites = {run.scores.run.suite for run in loaded}
        if len(suites) > 1:
            raise typer.BadParameter(f"runs come from different suites: {', '.join(sorted(suites))}")
        suite = get_suite(suites.pop())
        which = None if reference == "all" else [] if reference == "none" else reference.split(",")
        table = build_table(suite, loaded, which)
        heading = title or f"{suite.name} results"
        text = to_markdown(table, title=heading)
        typer.echo(text)
        if markdown:
            markdown.write_text(text, encoding="utf-8")
        if csv:
            csv.write_text(to_csv(table), encoding="utf-8")
        if html:
            html.parent.mkdir(parents=True, exist_ok=True)
            html.write_text(to_html(table, loaded, title=heading), encoding="utf-8")
            typer.echo(f"HTML report: {html}", err=True)


def run_analysis(runs: list[Path], name: str) -> str:
    """The Markdown of the analysis `name` of the runs' suite (`Suite.run_analyses`)."""
    from expvid.run.rundir import RunDir

    suites = {RunDir(path).read_manifest().suite for path in runs}
    if len(suites) > 1:
        raise DataError(f"runs come from different suites: {', '.join(sorted(suites))}")
    suite = get_suite(suites.pop())
    hook = getattr(suite, "run_analyses", None)
    offered = dict(hook()) if callable(hook) else {}
    if name not in offered:
        listing = ", ".join(sorted(offered)) or "none"
        raise DataError(f"the {suite.name} suite has no analysis {name!r} (its analyses: {listing})")
    text: str = offered[name].run(runs)
    return text


def compare_command(
    run_a: Annotated[Path, typer.Argument(help="First run directory.")],
    run_b: Annotated[Path, typer.Argument(help="Second run directory (same items).")],
    n_boot: Annotated[int, typer.Option("--n-boot")] = 2000,
    seed: Seed = 0,
) -> None:
    """Paired comparison of two runs on their common items (cluster bootstrap + sign-flip test by video)."""
    from expvid.run.compare import compare_runs, format_comparison

    with friendly_errors():
        result = compare_runs(run_a, run_b, n_boot=n_boot, seed=seed)
        typer.echo(format_comparison(result))
