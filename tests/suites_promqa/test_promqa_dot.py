"""The recipe as the official DOT text: node names are step texts, so repeated texts merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from expvid.suites.promqa import recipe_dot
from expvid.suites.promqa.recipe_dot import RecipeGraphError, dot_id
from expvid.suites.promqa.sample import GRAPHS

#: pydot's output for the 24 published graphs (see the file's "generated_by").
GOLDEN = Path(__file__).parent / "data" / "dot_golden.json"


def test_every_published_graph_renders_byte_for_byte_as_pydot_does(real_dir) -> None:
    graphs = json.loads((real_dir / "graphs.json").read_text())
    golden = json.loads(GOLDEN.read_text())["dot"]
    assert len(graphs) == 24
    for graph in graphs.values():
        assert recipe_dot(graph) == golden[graph["name"]], graph["name"]


def test_repeated_step_texts_become_one_node_with_a_self_loop(real_dir) -> None:
    graphs = {g["name"]: g for g in json.loads((real_dir / "graphs.json").read_text()).values()}
    lines = recipe_dot(graphs["Pinwheels"]).splitlines()
    step = '"slicing-Continue slicing with floss to create 1 more pinwheel"'
    assert lines.count(f"{step};") == 3  # three steps, one node name, printed once per step
    assert f"{step} -> {step};" in lines  # consecutive repeats: an edge from the node to itself


def test_sample_recipe_merges_its_repeated_steps() -> None:
    text = recipe_dot(GRAPHS["1"])
    lines = text.splitlines()
    assert lines[0] == "digraph G {" and lines[1] == "START;" and lines[-1] == "}"
    microwave = '"Microwave-Microwave the mug for 30 seconds"'
    stir = '"Stir-Stir the contents with a spoon"'
    assert lines.count(f"{microwave};") == 2 and lines.count(f"{microwave} -> {stir};") == 2
    # step 4 -> step 5 lands on the same node as step 1 -> step 2 leads to: the graph has a cycle now
    assert f'"Add-Add 1 teaspoon of cocoa powder to the mug" -> {microwave};' in lines
    assert f"{stir} -> END;" in lines


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("START", "START"),
        ("step_2", "step_2"),
        ("12", "12"),
        ("1.5", "1.5"),
        ("Add 1 cup", '"Add 1 cup"'),
        ('Say "hi"', '"Say \\"hi\\""'),
        ("node", '"node"'),  # a DOT keyword is quoted (pydot 1.x prints an empty line instead)
        ("Mix: stir", '"Mix: stir"'),  # quoted whole (pydot splits it into node:port)
    ],
)
def test_identifiers(name: str, written: str) -> None:
    assert dot_id(name) == written


def test_an_edge_to_an_unknown_step_is_an_error() -> None:
    with pytest.raises(RecipeGraphError, match="unknown step id"):
        recipe_dot({"name": "x", "steps": {"0": "START", "1": "END"}, "edges": [[0, 7]]})
