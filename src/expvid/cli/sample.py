"""`expvid sample make DIR [--suite ...]`: generate a suite's bundled sample benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from expvid.cli.suite_flags import DEFAULT_SUITE
from expvid.run.terminal import message_console, print_table

sample_app = typer.Typer(no_args_is_help=True, help="Generate the bundled sample benchmarks.")


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
        str,
        typer.Option("--suite", help="Whose published shapes (a suite with a sample; `expvid suites list`)."),
    ] = DEFAULT_SUITE,
    recipe: Annotated[
        str | None,
        typer.Option(
            "--recipe",
            help="Write a build recipe's inputs instead (a recipe with sample inputs; `expvid recipes list`).",
        ),
    ] = None,
) -> None:
    """Write a small benchmark in a suite's published layout, with synthetic videos or images."""
    if recipe is not None:
        _make_recipe_inputs(recipe, directory, seed, force)
        return
    from expvid.suites.registry import UnknownSuiteError, get_suite, suite_names
    from expvid.suites.release_io import SampleDirectoryError

    try:
        the_suite = get_suite(suite)
    except UnknownSuiteError as error:
        raise typer.BadParameter(str(error), param_hint="--suite") from None
    maker = getattr(the_suite, "make_sample", None)
    if not callable(maker):
        with_samples = [
            name for name in suite_names() if callable(getattr(get_suite(name), "make_sample", None))
        ]
        raise typer.BadParameter(
            f"the {suite} suite has no sample generator; suites with one: {', '.join(with_samples)}",
            param_hint="--suite",
        )
    try:
        report = maker(directory, seed, force=force)
    except SampleDirectoryError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    console = message_console()
    if report.counts:
        table = Table(title=f"Sample {suite} benchmark (seed {seed})")
        table.add_column("task")
        table.add_column("items", justify="right")
        for task, count in report.counts.items():
            table.add_row(task, str(count))
        table.add_row("total", str(sum(report.counts.values())))
        print_table(console, table)
    console.print(
        f"Sample {suite} benchmark in {report.root} (seed {seed}): {report.what}; {report.seconds:.1f} s",
        highlight=False,
        markup=False,
    )


def _make_recipe_inputs(recipe: str, directory: Path, seed: int, force: bool) -> None:
    """Sources `expvid build --recipe RECIPE` reads, as the recipe makes them (`Recipe.make_sample`)."""
    from expvid.recipes.api import RecipeError
    from expvid.recipes.registry import UnknownRecipeError, get_recipe, recipe_names

    def with_samples() -> str:
        names = []
        for name in recipe_names():
            try:
                if get_recipe(name).has_sample():
                    names.append(name)
            except UnknownRecipeError:
                continue
        return ", ".join(names) or "none"

    try:
        the_recipe = get_recipe(recipe)
    except UnknownRecipeError as error:
        raise typer.BadParameter(
            f"{error}; recipes with sample inputs: {with_samples()}", param_hint="--recipe"
        ) from None
    if not the_recipe.has_sample():
        raise typer.BadParameter(
            f"the {recipe} recipe has no sample inputs; recipes with sample inputs: {with_samples()}",
            param_hint="--recipe",
        )
    try:
        made = the_recipe.make_sample(directory, seed, force=force)
    except RecipeError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=1) from None
    message_console().print(
        f"Inputs for --recipe {recipe} in {made.sources}: {made.what}; {made.seconds:.1f} s",
        highlight=False,
        markup=False,
    )
