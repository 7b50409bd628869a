"""The one place build recipes are found by name: Python entry points in the group `expvid.recipes`.

Every recipe, the ones that ship with expvid included, is an entry point `NAME = "module:Class"` in
a package's metadata (expvid's own are in its pyproject.toml), so a package installed beside expvid
adds a recipe without touching expvid:

    [project.entry-points."expvid.recipes"]
    tinyrecipe = "tinyrecipe.recipe:TinyRecipe"

`expvid build --recipe NAME`, `expvid sample make --recipe NAME`, `expvid recipes list/show` and the
review platform ask this registry for the recipe and then ask the recipe. An installed package that
declares a built-in recipe's name does not replace it: the built-in is used and a warning says so.
"""

from __future__ import annotations

import logging
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from expvid.recipes.defaults import DEFAULT_RECIPE, ENTRY_POINT_GROUP

__all__ = [
    "DEFAULT_RECIPE",
    "UnknownRecipeError",
    "get_recipe",
    "recipe_class",
    "recipe_names",
    "register_recipe",
]

_REGISTERED: dict[str, type] = {}
_BUILT_IN_DISTRIBUTION = "expvid"
_log = logging.getLogger(__name__)


class UnknownRecipeError(ValueError):
    """No installed recipe has this name, or its package could not be loaded."""


def _distribution(point: EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return str(dist.metadata["Name"]) if dist is not None else ""


@cache
def _entry_points() -> dict[str, EntryPoint]:
    """One entry point per name, read once per process; a built-in name is never replaced."""
    points: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        held = points.get(point.name)
        if held is None or held.value == point.value:
            points[point.name] = point
            continue
        built_in = [p for p in (held, point) if _distribution(p).lower() == _BUILT_IN_DISTRIBUTION]
        keep = built_in[0] if built_in else held
        other = point if keep is held else held
        points[point.name] = keep
        _log.warning(
            "warning: %s declares the recipe name %r, also declared by %s: %s is used; give the entry "
            "point in %r another name to use the other one.",
            _distribution(other) or "a package", point.name, _distribution(keep) or "a package",
            keep.value, ENTRY_POINT_GROUP,
        )  # fmt: skip
    return points


def recipe_names() -> list[str]:
    """Installed recipes: the default first, then by name."""
    names = set(_entry_points()) | set(_REGISTERED)
    return sorted(names, key=lambda name: (name != DEFAULT_RECIPE, name))


def register_recipe(name: str, cls: type) -> None:
    """Add (or replace) a recipe in this process (tests, notebooks)."""
    _REGISTERED[name] = cls


def recipe_class(name: str) -> Any:
    """The recipe's class; `UnknownRecipeError` naming the installed ones for an unknown name."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    point = _entry_points().get(name)
    if point is None:
        raise UnknownRecipeError(
            f"unknown recipe {name!r}; installed recipes: {', '.join(recipe_names()) or 'none'} "
            f"(a package adds one under the entry-point group {ENTRY_POINT_GROUP!r})"
        )
    try:
        return point.load()
    except Exception as error:  # a broken outside package must not look like a missing recipe
        raise UnknownRecipeError(
            f"recipe {name!r} could not be loaded from {point.value!r}: {type(error).__name__}: {error}"
        ) from error


def get_recipe(name: str) -> Any:
    """A fresh instance of the recipe `name` (`expvid.recipes.api.Recipe`)."""
    return recipe_class(name)()


def recipes_with(attribute: str, value: Any) -> list[Any]:
    """Every installed recipe whose class declares `attribute == value` (a recipe that cannot be
    loaded is skipped: it is reported by `expvid recipes list`)."""
    found = []
    for name in recipe_names():
        try:
            cls = recipe_class(name)
        except UnknownRecipeError:
            continue
        if getattr(cls, attribute, None) == value:
            found.append(cls())
    return found
