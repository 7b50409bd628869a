"""Where the review platform asks the installed build recipes what it cannot know itself.

Candidates in the ExpVid release layout need nothing from here. A recipe with its own tasks, files,
review panel, release layout or whole-directory import declares them in its `ReviewHooks`
(`expvid.recipes.api`); this module finds them through the recipe registry, so that no
platform module names a recipe. The hooks are read once per process.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "export_formats",
    "exporter_for",
    "hooks_for_level",
    "hooks_for_task",
    "importer_for",
    "judged_pages_for",
    "recipe_tasks",
    "template_dirs",
]


@cache
def _recipes() -> tuple[Any, ...]:
    """Every installed recipe that declares something to the platform (tasks, a level or hooks),
    in registry order; their hooks are loaded only when first used."""
    from expvid.recipes.registry import UnknownRecipeError, get_recipe, recipe_names

    found = []
    for name in recipe_names():
        try:
            recipe = get_recipe(name)
        except UnknownRecipeError:
            continue  # `expvid recipes list` says why
        if recipe.review_tasks or recipe.review_level is not None:
            found.append(recipe)
    return tuple(found)


_HOOKS: dict[str, Any] = {}


def _hooks(recipe: Any) -> Any | None:
    if recipe.name not in _HOOKS:
        _HOOKS[recipe.name] = recipe.review_hooks()
    return _HOOKS[recipe.name]


def recipe_tasks() -> list[Any]:
    """Every `ReviewTask` the installed recipes declare."""
    return [task for recipe in _recipes() for task in recipe.review_tasks]


def hooks_for_task(task: str) -> Any | None:
    """The hooks of the recipe that declares `task`, or None (an ExpVid task)."""
    for recipe in _recipes():
        if any(spec.name == task for spec in recipe.review_tasks):
            return _hooks(recipe)
    return None


def hooks_for_level(level: int) -> Any | None:
    """The hooks of the recipe whose items are at `level`, or None (ExpVid's levels)."""
    for recipe in _recipes():
        if recipe.review_level == level:
            return _hooks(recipe)
    return None


def judged_levels() -> set[int]:
    """The levels whose items are judged on their recipe's own pages (not approved or edited)."""
    return {
        recipe.review_level
        for recipe in _recipes()
        if recipe.review_page == "procedural" and recipe.review_level is not None
    }


def judged_pages_for(item: Any) -> Any | None:
    """The judged-page implementation (page kind `procedural`) that owns `item`, or None."""
    if item.level not in judged_levels():
        return None
    hooks = hooks_for_level(item.level)
    return hooks.judged_pages() if hooks is not None else None


def importer_for(root: Path) -> Any | None:
    """The hooks of the recipe that imports the directory `root` itself, or None."""
    for recipe in _recipes():
        hooks = _hooks(recipe)
        if hooks is not None and hooks.claims_directory(root):
            return hooks
    return None


def template_dirs() -> list[Path]:
    """The template folders the installed recipes ship for their pages (`Recipe.review_templates`)."""
    return [Path(recipe.review_templates) for recipe in _recipes() if recipe.review_templates is not None]


def export_formats() -> dict[str, str]:
    """`--format` values the recipes add to `expvid platform export` -> the recipe's name."""
    return {
        recipe.export_format: recipe.name
        for recipe in _recipes()
        if recipe.export_format not in ("expvid", "hf")
    }


def exporter_for(export_format: str) -> Any | None:
    """The hooks of the recipe that exports `--format export_format`, or None."""
    for recipe in _recipes():
        if recipe.export_format == export_format:
            return _hooks(recipe)
    return None
