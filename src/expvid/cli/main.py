"""The `expvid` command: wires each stage's CLI module into one Typer app."""

from __future__ import annotations

import typer

from expvid.cli.build import build_command
from expvid.cli.data import data_app
from expvid.cli.demo import demo_command
from expvid.cli.eval import eval_command
from expvid.cli.frames import frames_command
from expvid.cli.platform import platform_app
from expvid.cli.report import compare_command, report_command
from expvid.cli.sample import sample_app
from expvid.cli.score import score_command
from expvid.cli.view import view_command  # light: the viewer is imported when it runs

app = typer.Typer(
    name="expvid",
    no_args_is_help=True,
    add_completion=False,
    help="Build, verify and run scientific-experiment video benchmarks for multimodal LLMs.",
)
app.command("demo")(demo_command)
app.command("eval")(eval_command)
app.command("score")(score_command)
app.command("report")(report_command)
app.command("compare")(compare_command)
app.command("frames")(frames_command)
app.command("build")(build_command)
app.command("view")(view_command)
app.add_typer(sample_app, name="sample")
app.add_typer(data_app, name="data")
app.add_typer(platform_app, name="platform")


if __name__ == "__main__":  # pragma: no cover
    app()
