"""No module outside a suite's or a recipe's own package names a suite or a recipe (docstrings and
comments included), except the default suite, whose name is also the tool's.

A module that names one either holds that suite's knowledge in shared code (a judge, a constant, a
branch on its name) or describes shared code by one user of it; both belong in the suite's package
(or in a hook the suite or recipe implements: `expvid.recipes.api.ReviewHooks` for the
review platform). `STILL_NAMING` lists the modules whose conversion is still to come; it is empty
and may only shrink: a listed module that no longer names one must leave the list.
"""

from __future__ import annotations

import re
from pathlib import Path

import expvid
from expvid.suites.defaults import DEFAULT_SUITE
from expvid.suites.registry import suite_class, suite_names

SOURCE = Path(expvid.__file__).parent
RECIPES = SOURCE / "construction" / "recipes"

#: Modules (relative to src/expvid) that still name a suite or recipe: none since the recipes became
#: plug-ins (66 before issue 30, 23 after the suites moved, 0 after the recipes did).
STILL_NAMING: frozenset[str] = frozenset()


def recipe_packages() -> dict[str, Path]:
    return {path.parent.name: path.parent for path in sorted(RECIPES.glob("*/__init__.py"))}


def own_packages() -> list[Path]:
    """The folders where a suite or a recipe may name itself: each built-in suite's package (the
    one its class lives in, when that is a package of its own) and each recipe's package."""
    folders = list(recipe_packages().values())
    for name in built_in_suites():
        module = suite_class(name).__module__
        parts = module.split(".")
        if parts[:2] == ["expvid", "suites"] and len(parts) > 3:
            folders.append(SOURCE.joinpath(*parts[1:3]))
    return folders


def built_in_suites() -> list[str]:
    return [name for name in suite_names() if suite_class(name).__module__.startswith("expvid.suites.")]


def names_pattern() -> re.Pattern[str]:
    """Every built-in suite's and recipe's name but the default suite's, in any case, as a word."""
    names = (set(built_in_suites()) | set(recipe_packages())) - {DEFAULT_SUITE}
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b", re.IGNORECASE)


def naming_modules() -> dict[str, list[str]]:
    """Each module outside the own packages that names a suite or recipe -> its first few lines that do."""
    pattern = names_pattern()
    own = own_packages()
    found: dict[str, list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        if any(folder in path.parents for folder in own):
            continue
        lines = [
            f"{number}: {line.strip()[:100]}"
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if pattern.search(line)
        ]
        if lines:
            found[path.relative_to(SOURCE).as_posix()] = lines[:3]
    return found


def test_the_names_searched_for_are_the_registered_suites_and_the_recipes() -> None:
    pattern = names_pattern()
    for name in ("scivideobench", "SciVideoBench", "ProMQA", "promqa", "SFE", "sfe", "MMVU", "mmvu"):
        assert pattern.search(f"a {name} judge"), name
    assert not pattern.search("the expvid suite") and not pattern.search("promqa_judge")
    own = {folder.relative_to(SOURCE).as_posix() for folder in own_packages()}
    assert {"suites/sfe", "suites/promqa", "construction/recipes/promqa"} <= own


def test_no_module_outside_its_own_package_names_a_suite_or_recipe() -> None:
    found = naming_modules()
    new = {path: lines for path, lines in found.items() if path not in STILL_NAMING}
    assert not new, (
        "these modules name a suite or recipe; move the knowledge into its package or a hook:\n"
        + ("\n".join(f"  {path}: {lines}" for path, lines in sorted(new.items())))
    )


def test_the_list_of_modules_still_to_convert_only_shrinks() -> None:
    found = naming_modules()
    converted = sorted(path for path in STILL_NAMING if path not in found)
    assert not converted, (
        f"these modules no longer name a suite or recipe: drop them from STILL_NAMING: {converted}"
    )
