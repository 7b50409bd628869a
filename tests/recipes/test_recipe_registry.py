"""Build recipes are plug-ins: found through the entry-point group `expvid.recipes`, described by
what they declare (`expvid recipes list/show`), and dispatched to by `expvid build` and `expvid
sample make` without a branch on a recipe's name."""

from __future__ import annotations

import ast
import os
from importlib.metadata import entry_points
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from typer.testing import CliRunner

import expvid
from expvid.cli.main import app
from expvid.recipes.api import (
    REVIEW_PAGES,
    BuildRequest,
    BuiltRelease,
    Recipe,
    RecipeSetting,
    RecipeSettingError,
    parse_settings,
)
from expvid.recipes.defaults import ENTRY_POINT_GROUP
from expvid.recipes.registry import get_recipe, recipe_names, register_recipe

runner = CliRunner()
SOURCE = Path(expvid.__file__).parent
BUILT_IN = ("expvid", "promqa", "scivideobench")


def test_the_built_in_recipes_come_from_entry_points_and_declare_everything() -> None:
    declared = {point.name for point in entry_points(group=ENTRY_POINT_GROUP)}
    assert set(BUILT_IN) <= declared
    assert recipe_names()[0] == "expvid"
    for name in BUILT_IN:
        recipe = get_recipe(name)
        assert isinstance(recipe, Recipe) and recipe.name == name
        assert recipe.inputs and recipe.stages and recipe.settings and recipe.judges, name
        assert recipe.review_page in REVIEW_PAGES and recipe.has_sample(), name
        assert recipe.release_suite == name  # each builds its own suite's layout


def test_recipes_list_and_show_fit_a_narrow_terminal() -> None:
    env = {"COLUMNS": "40"}
    listed = runner.invoke(app, ["recipes", "list"], env=env)
    assert listed.exit_code == 0, listed.output
    assert [line.split()[0] for line in listed.output.splitlines()] == list(BUILT_IN)
    for name in BUILT_IN:
        shown = runner.invoke(app, ["recipes", "show", name], env=env)
        assert shown.exit_code == 0, shown.output
        assert f"build: expvid build SOURCES --recipe {name} --out DIR --llm SPEC" in shown.output
        assert (
            "review page: " in shown.output and "export: expvid platform export DIR --format" in shown.output
        )
    promqa = runner.invoke(app, ["recipes", "show", "promqa"], env=env).output
    assert "parser = tolerant  (one of tolerant, official)" in promqa and "--format promqa" in promqa
    assert (
        "stages: transcription, generator, evaluator"
        in runner.invoke(app, ["recipes", "show", "scivideobench"]).output
    )
    unknown = runner.invoke(app, ["recipes", "show", "sfe"], env=env)  # a suite, not a recipe
    assert unknown.exit_code == 2 and "unknown recipe 'sfe'" in unknown.output


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["count=x"], "-R count=x: expected an integer"),
        (["count=-1"], "-R count=-1: must be at least 0"),
        (["ratio=nan"], "-R ratio=nan: expected a finite number"),
        (["mode=fast"], "-R mode=fast: expected one of strict, loose"),
        (["colour=blue"], "-R colour: not a setting of this recipe; settings: count, ratio, mode, strict"),
        (["count=1", "count=2"], "-R count is given twice"),
        (["count"], "-R count: expected KEY=VALUE"),
        (["strict=maybe"], "-R strict=maybe: expected true or false"),
    ],
)
def test_settings_are_typed_and_each_error_is_one_line_naming_the_key(pairs: list[str], message: str) -> None:
    settings = (
        RecipeSetting("count", int, 1, "how many", minimum=0),
        RecipeSetting("ratio", float, 0.5, "a share"),
        RecipeSetting("mode", str, "strict", "how", choices=("strict", "loose")),
        RecipeSetting("strict", bool, False, "whether"),
    )
    assert parse_settings(["count=3", "mode=loose", "strict=yes"], settings) == {
        "count": 3, "ratio": 0.5, "mode": "loose", "strict": True,
    }  # fmt: skip
    with pytest.raises(RecipeSettingError) as raised:
        parse_settings(pairs, settings)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)
    assert raised.value.hint == f"-R {pairs[0].partition('=')[0]}"


class _Echo(Recipe):
    """Records what `expvid build` hands it."""

    name = "echo"
    settings = (RecipeSetting("count", int, 1, "how many", minimum=1),)
    seen: ClassVar[list[BuildRequest]] = []

    def build(self, request: BuildRequest) -> BuiltRelease | None:
        request.refuse_flags(("vlm",), self.name)
        self.parse_settings(request.options)
        _Echo.seen.append(request)
        return None


def test_build_hands_a_registered_recipe_its_request(tmp_path: Path) -> None:
    register_recipe("echo", _Echo)
    base = ["build", str(tmp_path), "--recipe", "echo", "--out", str(tmp_path / "out"), "--llm", "openai:m@http://127.0.0.1:9/v1"]  # fmt: skip
    assert runner.invoke(app, [*base, "-R", "count=2", "--seed", "7"]).exit_code == 0
    (request,) = _Echo.seen
    assert request.options == ("count=2",) and request.flags["seed"] == 7 and not request.changed("levels")
    assert request.changed("seed") and request.defaults["seed"] == 0
    refused = runner.invoke(app, [*base, "--vlm", "openai:v"])
    assert refused.exit_code == 2 and "--vlm is not used by the echo recipe" in refused.output
    bad = runner.invoke(app, [*base, "-R", "count=0"])
    assert bad.exit_code == 2 and "-R count=0: must be at least 1" in " ".join(bad.output.split())
    unknown = runner.invoke(app, [*base[:3], "nosuch", *base[4:]])
    assert unknown.exit_code == 2 and "unknown recipe 'nosuch'" in " ".join(unknown.output.split())


def test_promqa_sample_inputs_are_what_its_build_reads(tmp_path: Path) -> None:
    made = runner.invoke(app, ["sample", "make", str(tmp_path / "s"), "--recipe", "promqa"])
    assert made.exit_code == 0, made.output
    again = runner.invoke(app, ["sample", "make", str(tmp_path / "s"), "--recipe", "promqa"])
    assert again.exit_code == 1 and "--force" in again.output
    planned = runner.invoke(app, ["build", str(tmp_path / "s" / "sources"), "--recipe", "promqa", "--out",
                                  str(tmp_path / "out"), "--llm", "openai:m@http://127.0.0.1:9/v1", "--dry-run"])  # fmt: skip
    assert planned.exit_code == 0 and "calls" in planned.output.lower(), planned.output


def test_no_cli_module_branches_on_a_recipe_name() -> None:
    """`recipe == "..."` or a tuple of recipe names in cli/ would bypass the registry."""
    names = set(BUILT_IN) - {"expvid"}
    found = []
    for path in sorted((SOURCE / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{path.name}:{node.lineno}")
    assert not found, found
    assert not os.path.exists(SOURCE / "cli" / "build_promqa.py")


def _point(name: str, value: str, distribution: str) -> SimpleNamespace:
    return SimpleNamespace(
        name=name, value=value, dist=SimpleNamespace(metadata={"Name": distribution}),
        load=lambda: {"recipe": Recipe}[value.rpartition(":")[2].lower()],
    )  # fmt: skip


def test_an_installed_package_cannot_replace_a_built_in_recipe(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from expvid.recipes import registry

    points = [
        _point("promqa", "othertool.recipe:Recipe", "othertool"),
        _point("promqa", "expvid.construction.recipes.promqa.recipe:Recipe", "expvid"),
    ]
    monkeypatch.setattr(registry, "entry_points", lambda group: points)
    registry._entry_points.cache_clear()
    try:
        assert registry._entry_points()["promqa"].dist.metadata["Name"] == "expvid"
        assert "othertool declares the recipe name 'promqa'" in caplog.text and "another name" in caplog.text
    finally:
        registry._entry_points.cache_clear()
