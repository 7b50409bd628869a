"""Drawing a recipe graph: an SVG for the review page (B.3) and a PNG for the "image" prompts (B.2).

ProMQA drew its graphs with Graphviz (pydot): boxes labelled "id. text", one arrow per edge. For
the review interface (Figure 11) it coloured each step by its status in the example: steps already
passed in green, the current step in orange, steps not passed dotted, and a warning mark on steps
that carry errors. expvid lays the graph out itself (no Graphviz binary needed): layers by longest
path from START, order within a layer by a few barycenter sweeps (fewer crossing arrows), boxes of
wrapped text, straight arrows from the bottom of a step to the top of the next. The same layout
feeds both drawings.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape
from typing import Literal

from expvid.construction.recipes.promqa.graph import RecipeGraph

Status = Literal["passed", "current", "pending"]
BOX_WIDTH = 190
LINE_HEIGHT = 15
CHARS_PER_LINE = 30
GAP_X = 24
GAP_Y = 36
PAD = 12
#: Words of a step text shown in a box (the official drawing keeps 20).
MAX_WORDS = 20


@dataclass(frozen=True)
class Box:
    node: int
    label: list[str]
    x: float
    y: float
    width: float
    height: float

    @property
    def top(self) -> tuple[float, float]:
        return (self.x + self.width / 2, self.y)

    @property
    def bottom(self) -> tuple[float, float]:
        return (self.x + self.width / 2, self.y + self.height)


@dataclass(frozen=True)
class Layout:
    boxes: dict[int, Box]
    edges: list[tuple[int, int]]
    width: float
    height: float


def _label(node: int, text: str) -> list[str]:
    words = text.split()
    short = " ".join(words[:MAX_WORDS]) + (" ..." if len(words) > MAX_WORDS else "")
    label = short if text in ("START", "END") else f"{node}. {short}"
    return textwrap.wrap(label, CHARS_PER_LINE) or [label]


def _centre(recipe: RecipeGraph, node: int, position: dict[int, int], down: bool) -> float:
    """Mean position of the node's neighbours in the layer above (down) or below (up)."""
    links = recipe.predecessors(node) if down else recipe.successors(node)
    return sum(position[n] for n in links) / len(links) if links else float(position[node])


def layout(recipe: RecipeGraph) -> Layout:
    order = recipe.topological_order
    layer: dict[int, int] = {}
    for node in order:
        layer[node] = max((layer[p] + 1 for p in recipe.predecessors(node)), default=0)
    layers: dict[int, list[int]] = {}
    for node in order:
        layers.setdefault(layer[node], []).append(node)
    rank = {node: i for i, node in enumerate(order)}
    for sweep in range(4):  # barycenter ordering, down then up
        levels = sorted(layers) if sweep % 2 == 0 else sorted(layers, reverse=True)
        for level in levels:
            position = {n: i for lv in layers.values() for i, n in enumerate(lv)}
            down = sweep % 2 == 0
            centres = {node: _centre(recipe, node, position, down) for node in layers[level]}
            layers[level].sort(key=lambda n: (centres[n], rank[n]))
    labels = {node: _label(node, recipe.steps[node]) for node in recipe.steps}
    widest = max(len(nodes) for nodes in layers.values())
    width = PAD * 2 + widest * BOX_WIDTH + (widest - 1) * GAP_X
    boxes: dict[int, Box] = {}
    y = float(PAD)
    for level in sorted(layers):
        nodes = layers[level]
        row_width = len(nodes) * BOX_WIDTH + (len(nodes) - 1) * GAP_X
        x = (width - row_width) / 2
        tallest = 0.0
        for node in nodes:
            height = len(labels[node]) * LINE_HEIGHT + 10
            boxes[node] = Box(node, labels[node], x, y, BOX_WIDTH, height)
            tallest = max(tallest, height)
            x += BOX_WIDTH + GAP_X
        y += tallest + GAP_Y
    return Layout(boxes=boxes, edges=list(recipe.edges), width=width, height=y - GAP_Y + PAD)


_STYLE = {
    "passed": ('stroke="#2e7d32" stroke-width="2.5" fill="#e8f5e9"', "passed"),
    "current": ('stroke="#ef6c00" stroke-width="3" fill="#fff3e0"', "current step"),
    "pending": ('stroke="#757575" stroke-width="1.2" stroke-dasharray="4 3" fill="#ffffff"', "not passed"),
}


def statuses(
    recipe: RecipeGraph, previous: Iterable[Mapping[str, object]], current: Mapping[str, object]
) -> tuple[dict[int, Status], set[int]]:
    """Each node's status in an example, and the nodes whose performed step carries errors."""
    status: dict[int, Status] = dict.fromkeys(recipe.steps, "pending")
    status[0] = "passed"
    flagged: set[int] = set()
    for step in previous:
        node = step.get("step_id")
        if isinstance(node, int) and node in status:
            status[node] = "passed"
            if step.get("errors"):
                flagged.add(node)
    node = current.get("step_id")
    if isinstance(node, int) and node in status:
        status[node] = "current"
        if current.get("errors"):
            flagged.add(node)
    return status, flagged


def recipe_svg(
    recipe: RecipeGraph,
    status: Mapping[int, Status] | None = None,
    flagged: Iterable[int] = (),
) -> str:
    """An inline SVG of the recipe, coloured by `status` (all pending when None), warnings on `flagged`."""
    shape = layout(recipe)
    marks = set(flagged)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="recipe-graph" viewBox="0 0 {shape.width:.0f} '
        f'{shape.height:.0f}" width="{shape.width:.0f}" height="{shape.height:.0f}" role="img" '
        f'aria-label="Recipe graph: {escape(recipe.name)}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
    ]
    for a, b in shape.edges:
        (x1, y1), (x2, y2) = shape.boxes[a].bottom, shape.boxes[b].top
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#555" '
            'stroke-width="1.2" marker-end="url(#arrow)"/>'
        )
    for node, box in shape.boxes.items():
        state: Status = status.get(node, "pending") if status else "pending"
        style, word = _STYLE[state]
        warn = node in marks
        parts.append(
            f'<g class="step step-{state}{" step-error" if warn else ""}" data-step="{node}">'
            f"<title>{escape(recipe.steps[node])} ({word}{', with errors' if warn else ''})</title>"
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.0f}" height="{box.height:.0f}" '
            f'rx="4" {style}/>'
        )
        for i, line in enumerate(box.label):
            parts.append(
                f'<text x="{box.x + 8:.1f}" y="{box.y + 17 + i * LINE_HEIGHT:.1f}" font-size="12" '
                f'font-family="sans-serif">{escape(line)}</text>'
            )
        if warn:
            parts.append(
                f'<text x="{box.x - 4:.1f}" y="{box.y + 4:.1f}" font-size="15" fill="#c62828">\u26a0</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def recipe_png(recipe: RecipeGraph) -> bytes:
    """The recipe graph as a PNG (boxes labelled "id. text", arrows), as the image prompts send it."""
    from PIL import Image, ImageDraw, ImageFont

    shape = layout(recipe)
    image = Image.new("RGB", (int(shape.width), int(shape.height)), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=12)
    for a, b in shape.edges:
        (x1, y1), (x2, y2) = shape.boxes[a].bottom, shape.boxes[b].top
        draw.line([(x1, y1), (x2, y2)], fill=(80, 80, 80), width=1)
        draw.polygon([(x2, y2), (x2 - 4, y2 - 8), (x2 + 4, y2 - 8)], fill=(80, 80, 80))
    for box in shape.boxes.values():
        draw.rectangle([box.x, box.y, box.x + box.width, box.y + box.height], outline="black", width=1)
        for i, line in enumerate(box.label):
            draw.text((box.x + 8, box.y + 5 + i * LINE_HEIGHT), line, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()
