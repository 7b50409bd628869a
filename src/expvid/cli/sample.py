"""`expvid sample make DIR [--suite ...]`: generate a bundled sample benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from expvid.run.terminal import message_console, print_table
from expvid.suites.release_io import SampleDirectoryError as SuiteSampleDirectoryError
from expvid.suites.sample import SampleDirectoryError, make_sample

sample_app = typer.Typer(no_args_is_help=True, help="Generate the bundled sample benchmarks.")

SUITES = ("expvid", "scivideobench", "promqa", "sfe")


@sample_app.callback()
def _sample() -> None:
    """Generate the bundled sample benchmarks."""


@sample_app.command("make")
def make(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Where to write the sample (a new or empty directory).", metavar="DIR", show_default=False
        ),
    ],
    seed: Annotated[int, typer.Option("--seed", help="Same seed -> identical annotations and truth.")] = 0,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a sample previously generated in DIR.")
    ] = False,
    suite: Annotated[
        str, typer.Option("--suite", help="Which benchmark's published shapes: " + ", ".join(SUITES) + ".")
    ] = "expvid",
    recipe: Annotated[
        str | None,
        typer.Option(
            "--recipe",
            help="Write a build recipe's inputs instead: scivideobench (narrated videos, papers, no transcripts).",
        ),
    ] = None,
) -> None:
    """Write a small benchmark in a suite's published layout, with synthetic videos or images."""
    if recipe is not None:
        _make_recipe_inputs(recipe, directory, seed, force)
        return
    if suite not in SUITES:
        raise typer.BadParameter(
            f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}", param_hint="--suite"
        )
    if suite != "expvid":
        _make_other(suite, directory, seed, force)
        return
    try:
        summary = make_sample(directory, seed=seed, force=force)
    except SampleDirectoryError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    table = Table(title=f"Sample ExpVid benchmark (seed {summary.seed})")
    table.add_column("task")
    table.add_column("items", justify="right")
    for task, count in summary.items.items():
        table.add_row(task, str(count))
    table.add_row("total", str(summary.total_items))
    console = message_console()
    print_table(console, table)
    console.print(f"written to {summary.root}")
    console.print(
        f"{len(summary.experiments)} experiments in the release, {len(summary.rejected)} raw sources for "
        f"curation to reject, {summary.clips} video files; {summary.seconds:.1f} s",
        highlight=False,
    )


def _make_other(suite: str, directory: Path, seed: int, force: bool) -> None:
    from expvid.suites.promqa import make_promqa_sample
    from expvid.suites.scivideobench import make_scivideobench_sample
    from expvid.suites.sfe import make_sfe_sample

    try:
        if suite == "scivideobench":
            svb = make_scivideobench_sample(directory, seed, force=force)
            what = f"{svb.questions} questions on {svb.videos} videos"
            root, seconds = svb.root, svb.seconds
        elif suite == "promqa":
            pmq = make_promqa_sample(directory, seed, force=force)
            what = f"{pmq.examples} examples on {pmq.recordings} recordings"
            if pmq.sources is not None:
                what += f"; inputs for expvid build --recipe promqa in {pmq.sources}"
            root, seconds = pmq.root, pmq.seconds
        else:
            sfe = make_sfe_sample(directory, seed, force=force)
            what = ", ".join(f"{n} {language} questions" for language, n in sfe.questions.items())
            what += f", {sfe.images} images"
            root, seconds = sfe.root, sfe.seconds
    except SuiteSampleDirectoryError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    message_console().print(
        f"Sample {suite} benchmark in {root} (seed {seed}): {what}; {seconds:.1f} s", highlight=False
    )


def _make_recipe_inputs(recipe: str, directory: Path, seed: int, force: bool) -> None:
    """Inputs of `expvid build --recipe RECIPE`: sources/<id>/{video.mp4 with narration, paper.md, meta.json}."""
    if recipe != "scivideobench":
        raise typer.BadParameter(
            f"unknown recipe {recipe!r}; recipes with sample inputs: scivideobench", param_hint="--recipe"
        )
    from expvid.suites.sample.narration import NarrationError
    from expvid.suites.sample.speech_sources import SpeechSourcesError, make_speech_sources

    try:
        made = make_speech_sources(directory, seed, force=force)
    except (SpeechSourcesError, NarrationError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    message_console().print(
        f"Inputs for --recipe scivideobench in {made.root / 'sources'}: {len(made.experiments)} narrated videos "
        f"({made.audio_seconds / 60:.1f} min of speech), papers, no transcripts; {made.seconds:.1f} s",
        highlight=False,
    )
