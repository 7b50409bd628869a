"""A recipe as CaptainCook4D and ProMQA publish it: a DAG of step texts from START (0) to END.

`graphs.json` of the ProMQA release and CaptainCook4D's `task_graphs/*.json` hold the same
`{steps: {id: text}, edges: [[from, to], ...]}`. What ProMQA derives from it, kept exactly:

- node order: the official code builds a networkx DiGraph with `add_edges_from(edges)` and walks
  `G.nodes`, i.e. nodes in the order they first appear in the edge list. The order of next and
  missing steps in every generation prompt follows it, so it is reproduced here (`node_order`);
- next steps of a set of performed steps (START counts as performed): steps not performed whose
  predecessors were all performed and none of whose descendants was (a later step already done
  means this one was skipped, not that it comes next);
- missing steps: steps not performed with a performed ancestor and a performed descendant.

END (the step whose text is "END") is never a next or missing step.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

START_ID = 0
START_TEXT = "START"
END_TEXT = "END"


class RecipeError(ValueError):
    """A recipe graph without the published shape (named in the message)."""


@dataclass(frozen=True)
class RecipeGraph:
    """One recipe: activity id and name, step texts by id, and the edges as published."""

    activity_id: str
    name: str
    steps: dict[int, str]
    edges: tuple[tuple[int, int], ...]
    _succ: dict[int, list[int]] = field(init=False, repr=False, compare=False)
    _pred: dict[int, list[int]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        succ: dict[int, list[int]] = {}
        pred: dict[int, list[int]] = {}
        for a, b in self.edges:
            succ.setdefault(a, []).append(b)
            pred.setdefault(b, []).append(a)
        object.__setattr__(self, "_succ", succ)
        object.__setattr__(self, "_pred", pred)

    @classmethod
    def from_release(cls, activity_id: str, name: str, data: Mapping[str, Any]) -> RecipeGraph:
        """From `{steps, edges}` (graphs.json entry or a CaptainCook4D task graph file)."""
        raw_steps, raw_edges = data.get("steps"), data.get("edges")
        if not isinstance(raw_steps, Mapping) or not raw_steps:
            raise RecipeError(f"recipe {name!r}: 'steps' must map step ids to texts")
        steps: dict[int, str] = {}
        for key, text in raw_steps.items():
            try:
                number = int(key)
            except (TypeError, ValueError):
                raise RecipeError(f"recipe {name!r}: step id {key!r} is not a number") from None
            if not isinstance(text, str) or not text:
                raise RecipeError(f"recipe {name!r}: step {key} has no text")
            steps[number] = text
        if not isinstance(raw_edges, Sequence) or isinstance(raw_edges, str):
            raise RecipeError(f"recipe {name!r}: 'edges' must be a list of [from, to] pairs")
        edges: list[tuple[int, int]] = []
        for edge in raw_edges:
            if (
                not isinstance(edge, Sequence)
                or isinstance(edge, str)
                or len(edge) != 2
                or not all(isinstance(end, int) and not isinstance(end, bool) for end in edge)
            ):
                raise RecipeError(f"recipe {name!r}: edge {edge!r} is not a [from, to] pair of step ids")
            unknown = [end for end in edge if end not in steps]
            if unknown:
                raise RecipeError(f"recipe {name!r}: edge {list(edge)} names unknown step id(s) {unknown}")
            edges.append((edge[0], edge[1]))
        if steps.get(START_ID) != START_TEXT:
            raise RecipeError(f"recipe {name!r}: step 0 must be START")
        graph = cls(activity_id=str(activity_id), name=name, steps=steps, edges=tuple(edges))
        graph.topological_order  # noqa: B018 - raises on a cycle
        return graph

    def to_release(self) -> dict[str, Any]:
        """The graphs.json entry (step ids as strings, in the published order)."""
        return {
            "name": self.name,
            "steps": {str(k): v for k, v in self.steps.items()},
            "edges": [list(edge) for edge in self.edges],
        }

    @cached_property
    def node_order(self) -> tuple[int, ...]:
        """Nodes in order of first appearance in the edge list (networkx `add_edges_from` order)."""
        order: dict[int, None] = {}
        for a, b in self.edges:
            order.setdefault(a, None)
            order.setdefault(b, None)
        return tuple(order)

    @cached_property
    def end_ids(self) -> frozenset[int]:
        return frozenset(k for k, v in self.steps.items() if v == END_TEXT)

    @cached_property
    def topological_order(self) -> tuple[int, ...]:
        """Kahn's order, ties by step id; `RecipeError` when the graph has a cycle."""
        indegree = {node: len(self._pred.get(node, [])) for node in self.steps}
        ready = sorted(node for node, degree in indegree.items() if degree == 0)
        order: list[int] = []
        while ready:
            node = ready.pop(0)
            order.append(node)
            for nxt in self._succ.get(node, []):
                indegree[nxt] -= 1
                if indegree[nxt] == 0:
                    ready.append(nxt)
                    ready.sort()
        if len(order) != len(self.steps):
            raise RecipeError(f"recipe {self.name!r}: the step graph has a cycle")
        return tuple(order)

    def predecessors(self, node: int) -> list[int]:
        return list(self._pred.get(node, []))

    def successors(self, node: int) -> list[int]:
        return list(self._succ.get(node, []))

    def _reach(self, node: int, links: dict[int, list[int]]) -> set[int]:
        seen: set[int] = set()
        queue = deque(links.get(node, []))
        while queue:
            current = queue.popleft()
            if current not in seen:
                seen.add(current)
                queue.extend(links.get(current, []))
        return seen

    def ancestors(self, node: int) -> set[int]:
        return self._reach(node, self._pred)

    def descendants(self, node: int) -> set[int]:
        return self._reach(node, self._succ)

    def next_steps(self, performed: Iterable[int]) -> list[int]:
        """Steps that may come next after `performed` (START included implicitly), in node order."""
        done = {*performed, START_ID}
        return [
            node
            for node in self._not_done(done)
            if all(p in done for p in self.predecessors(node)) and not (self.descendants(node) & done)
        ]

    def missing_steps(self, performed: Iterable[int]) -> list[int]:
        """Steps skipped so far: a performed ancestor and a performed descendant, in node order."""
        done = {*performed, START_ID}
        return [
            node
            for node in self._not_done(done)
            if self.ancestors(node) & done and self.descendants(node) & done
        ]

    def _not_done(self, done: set[int]) -> list[int]:
        """The steps (END excluded) not in `done`, in node order."""
        return [node for node in self.node_order if node not in self.end_ids and node not in done]

    def text_nodes(self, text: str) -> list[int]:
        """The nodes carrying `text`, in topological order (repeated steps: "Stir" twice)."""
        return [node for node in self.topological_order if self.steps[node] == text]


def activity_key(name: str) -> str:
    """CaptainCook4D's task graph file stem for an activity name: lower case, no spaces."""
    return name.lower().replace(" ", "")
