"""A ProMQA recipe graph as the DOT text the official code puts in its prompts.

The official `load_recipe` builds a `pydot.Dot(graph_type="digraph")`, adds one node per step
(named by the step TEXT, in `steps` order) and one edge per `edges` pair (endpoints named by step
text), then sends `G.to_string().strip()`. Consequences kept here on purpose:

- node names are step texts, so two steps with the same text are ONE node: their edges meet, an
  edge between them becomes a self-loop, and the node statement is printed once per step
  (pydot prints every `add_node` call);
- statements are printed in the order they were added: all nodes, then all edges;
- a name is written bare when it is a plain identifier or a number (START, END), otherwise in
  double quotes with inner quotes escaped.

Verified byte for byte against pydot 1.4.2, 2.0.0, 3.0.2 and 4.0.1 on the 24 published graphs
(tests/suites_promqa/data/dot_golden.json). Where pydot itself is inconsistent we do not follow
it: a name containing ":" is quoted whole (pydot splits it into node:port, differently per
version), and a name that is a DOT keyword ("node", "edge", ...) is quoted (pydot 1.x prints an
empty line for it). Neither occurs in the release.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_PLAIN_ID = re.compile(r"^[_a-zA-Z][a-zA-Z0-9_]*$")
_NUMERAL = re.compile(r"^-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)$")
_KEYWORDS = frozenset({"graph", "subgraph", "digraph", "node", "edge", "strict"})


def dot_id(name: str) -> str:
    """`name` as a DOT identifier: bare when it may be, else quoted."""
    if name.lower() not in _KEYWORDS and (_PLAIN_ID.match(name) or _NUMERAL.match(name)):
        return name
    escaped = name.replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


class RecipeGraphError(ValueError):
    """A graph record without the shape graphs.json has."""


def recipe_dot(graph: Mapping[str, Any]) -> str:
    """The DOT digraph for one graphs.json entry (`{name, steps: {id: text}, edges: [[from, to]]}`)."""
    steps = graph.get("steps")
    edges = graph.get("edges")
    if not isinstance(steps, Mapping) or not all(isinstance(text, str) for text in steps.values()):
        raise RecipeGraphError("steps must be an object mapping step ids to step texts")
    if not isinstance(edges, Sequence) or isinstance(edges, str):
        raise RecipeGraphError("edges must be a list of [from, to] step id pairs")
    text_of = {str(step_id): text for step_id, text in steps.items()}
    lines = ["digraph G {"]
    lines += [f"{dot_id(text)};" for text in steps.values()]
    for edge in edges:
        if not isinstance(edge, Sequence) or isinstance(edge, str) or len(edge) != 2:
            raise RecipeGraphError(f"edge {edge!r} is not a [from, to] pair")
        missing = [str(end) for end in edge if str(end) not in text_of]
        if missing:
            raise RecipeGraphError(f"edge {list(edge)} names unknown step id(s) {', '.join(missing)}")
        lines.append(f"{dot_id(text_of[str(edge[0])])} -> {dot_id(text_of[str(edge[1])])};")
    lines.append("}")
    return "\n".join(lines)
