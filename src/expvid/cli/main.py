"""The `expvid` command: wires each stage's CLI module into one Typer app.

Commands are registered by reference and imported only when they run (`expvid.cli.lazy`), so
`expvid --help` and `expvid frames` start without loading every stage's dependencies.
"""

from __future__ import annotations

from typing import Annotated

import typer

from expvid.cli.lazy import LazyCommand, lazy_group

COMMANDS = {
    "demo": LazyCommand(
        "expvid.cli.demo:demo_command",
        "Generate the sample benchmark, evaluate offline baselines on it and write the HTML report.",
    ),
    "eval": LazyCommand(
        "expvid.cli.eval:eval_command",
        "Evaluate MODEL on a benchmark; writes manifest.json, predictions.jsonl, judgments.jsonl, scores.json.",
    ),
    "eval-set": LazyCommand(
        "expvid.cli.eval_set:eval_set_command",
        "Run every model on every suite and setting of CONFIG.yaml; one table and a leaderboard at the end.",
    ),
    "batches": LazyCommand(
        "expvid.cli.batches:batches_app",
        "List or cancel a run's batches at its provider (runs made with --batch).",
    ),
    "score": LazyCommand(
        "expvid.cli.score:score_command",
        "Score a run directory, an external predictions file, or lmms-eval logs (--from lmms-eval).",
    ),
    "report": LazyCommand(
        "expvid.cli.report:report_command",
        "Print the paper-layout table for RUNS (Markdown) and optionally write CSV and HTML.",
    ),
    "compare": LazyCommand(
        "expvid.cli.report:compare_command",
        "Paired comparison of two runs on their common items (cluster bootstrap + sign-flip test by video).",
    ),
    "frames": LazyCommand(
        "expvid.cli.frames:frames_command",
        "Print the frames chosen from VIDEO (index, time, target) as JSON; --out writes the images.",
    ),
    "audit": LazyCommand(
        "expvid.cli.audit:audit_command",
        "Audit a release: can its items be answered without the video? Writes audit.json, audit.md, audit.html.",
    ),
    "build": LazyCommand(
        "expvid.cli.build:build_command",
        "Build a candidate benchmark from sources with a recipe (default: ExpVid's Level-1/2/3 items).",
    ),
    "sample": LazyCommand("expvid.cli.sample:sample_app", "Generate the bundled sample benchmarks."),
    "suites": LazyCommand(
        "expvid.cli.suites:suites_app", "List the installed benchmark suites and their settings."
    ),
    "recipes": LazyCommand(
        "expvid.cli.recipes:recipes_app", "List the installed build recipes and their settings."
    ),
    "data": LazyCommand("expvid.cli.data:data_app", "Inspect and validate benchmark data."),
    "platform": LazyCommand(
        "expvid.cli.platform:platform_app", "Expert verification platform (web review of candidates)."
    ),
    "export": LazyCommand("expvid.cli.export:export_app", "Export a benchmark for other evaluation tools."),
    "view": LazyCommand(
        "expvid.cli.view:view_command",
        "Serve a read-only viewer of RUNS (prints its URL), or write it as one HTML file with --export.",
    ),
}

app = typer.Typer(
    name="expvid",
    cls=lazy_group(COMMANDS),
    no_args_is_help=True,
    add_completion=False,
    # Plain click error output: rich would draw usage errors in a panel hard-wrapped at the
    # terminal width, breaking the paths and values they quote.
    rich_markup_mode=None,
    # click caps help at 80 columns by default, cutting the one-line command summaries; wide
    # terminals get them whole (narrow ones still wrap help text, never error messages).
    context_settings={"max_content_width": 120},
    help="Build, verify and run scientific-experiment video benchmarks for multimodal LLMs.",
)


def _installed_version() -> str:
    """The installed distribution's version (what `pip` installed), or the package's own outside one."""
    from importlib.metadata import PackageNotFoundError, version  # only when asked: not on --help

    try:
        return version("expvid")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from expvid import __version__

        return __version__


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"expvid {_installed_version()}")
        raise typer.Exit()


@app.callback()
def _expvid(
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print expvid's version and exit.", is_eager=True, callback=_print_version
        ),
    ] = False,
) -> None:
    """Build, verify and run scientific-experiment video benchmarks for multimodal LLMs."""


if __name__ == "__main__":  # pragma: no cover
    app()
