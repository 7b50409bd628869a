"""`expvid demo`: the whole chain on the bundled sample, offline, in about a minute.

sample benchmark -> evaluate two offline baselines -> score (offline judge for Level 3) ->
Markdown table and a self-contained HTML report. Needs no network, GPU or API key.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from expvid.cli.common_options import Quiet
from expvid.commands.errors import friendly_errors
from expvid.run.terminal import message_console

console = message_console(stderr=True)

DEMO_MODELS = ("longest-option", "random")


def demo_command(
    out: Annotated[
        Path, typer.Option("--out", help="Folder for the sample, the runs and the report.")
    ] = Path("demo"),
    quiet: Quiet = False,
) -> None:
    """Generate the sample benchmark, evaluate offline baselines on it and write the HTML report."""
    from expvid.run.config import EvalConfig
    from expvid.run.evaluate import evaluate
    from expvid.run.report import build_table, load_runs, to_html, to_markdown
    from expvid.suites.registry import DEFAULT_SUITE, get_suite
    from expvid.suites.sample import is_sample_dir, make_sample

    with friendly_errors():
        data = out / "sample"
        if not is_sample_dir(data):
            console.print(f"generating the sample benchmark in {data} ...", markup=False)
            make_sample(data)
        run_dirs = []
        for model in DEMO_MODELS:
            run_dir = out / "runs" / model
            config = EvalConfig(
                data=data, model=model, out=run_dir, cache_dir=out / "cache", n_bootstrap=1000
            )
            asyncio.run(
                evaluate(config, command=["expvid", "demo"], console=console, show_progress=not quiet)
            )
            run_dirs.append(run_dir)
        runs = load_runs(run_dirs)
        suite = get_suite(DEFAULT_SUITE)
        table = build_table(suite, runs, ["Human", "GPT-5", "Qwen2.5-VL-7B"])
        typer.echo(to_markdown(table, title="ExpVid sample: offline baselines"))
        report = out / "report.html"
        report.write_text(to_html(table, runs, title="ExpVid sample: offline baselines"), encoding="utf-8")
        console.print(f"HTML report: {report}", markup=False)
