"""`expvid recipes list|show`: the installed build recipes (built in or from other packages) and
what each declares: inputs, stages, settings, review page, export format, judges."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from expvid.cli.plugin_listing import echo_description, echo_listing, plugin_title

recipes_app = typer.Typer(no_args_is_help=True, help="List the installed build recipes and their settings.")


@recipes_app.callback()
def _recipes() -> None:
    """List the installed build recipes and their settings."""


@recipes_app.command("list")
def list_recipes() -> None:
    """Every installed recipe: its name, what it builds, the suite that evaluates it, its module."""
    from expvid.recipes.registry import UnknownRecipeError, recipe_class, recipe_names

    def line(name: str, cls: Any) -> str:
        return (
            f"{name}  {plugin_title(cls)}  (suite {getattr(cls, 'release_suite', '?')})  [{cls.__module__}]"
        )

    echo_listing(recipe_names(), recipe_class, UnknownRecipeError, line)


@recipes_app.command("show")
def show_recipe(
    name: Annotated[str, typer.Argument(help="Recipe name (see `expvid recipes list`).", metavar="NAME")],
) -> None:
    """A recipe's inputs, stages, settings (`-R KEY=VALUE`), review page, export format and judges."""
    from expvid.recipes.registry import UnknownRecipeError

    echo_description(describe_recipe, name, UnknownRecipeError)


def _shown(value: Any) -> str:
    return "(none)" if value is None else str(value)


def describe_recipe(name: str) -> str:
    """The text `expvid recipes show NAME` prints; `UnknownRecipeError` for an unknown name."""
    from expvid.recipes.defaults import REVIEW_PAGES
    from expvid.recipes.registry import get_recipe

    recipe = get_recipe(name)
    lines = [f"{name}: {plugin_title(type(recipe))}"]
    if recipe.paper:
        lines.append(f"follows: {recipe.paper}")
    lines += ["", f"build: expvid build SOURCES --recipe {name} --out DIR --llm SPEC"]
    lines.append(f"evaluate: expvid eval --suite {recipe.release_suite} --data DIR")
    if recipe.has_sample():
        lines.append(f"sample inputs: expvid sample make DIR --recipe {name}")
    lines += ["", "inputs (in SOURCES):"]
    lines += [
        f"  {item.pattern}{'' if item.required else ' (optional)'}: {item.help}" for item in recipe.inputs
    ] or ["  (none declared)"]
    lines += ["", "stages: " + (", ".join(recipe.stages) or "(none declared)")]
    page = REVIEW_PAGES.get(recipe.review_page, "declared by the recipe's package")
    lines += [f"review page: {recipe.review_page}: {page}"]
    lines += [f"export: expvid platform export DIR --format {recipe.export_format}"]
    lines += ["", "judges:" if recipe.judges else "judges: none"]
    lines += [f"  {judge.name}: {judge.help}" for judge in recipe.judges]
    settings = recipe.settings
    lines += ["", f"settings (-R KEY=VALUE; {len(settings)}):" if settings else "settings: none"]
    for setting in settings:
        kind = f"one of {', '.join(setting.choices)}" if setting.choices else setting.type.__name__
        lines.append(f"  {setting.key} = {_shown(setting.default)}  ({kind})")
        lines.append(f"      {setting.help}")
    if recipe.docs:
        lines += ["", f"docs: docs/{recipe.docs}"]
    return "\n".join(lines)
