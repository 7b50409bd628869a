"""Bounding boxes for grounding items: `[x1, y1, x2, y2]` normalised to 0..1.

Releases write several boxes as `[x1,y1,x2,y2;x1,y1,x2,y2]`; models also write `[[...], [...]]` or
one `[...]` per line. Coordinates outside 0..1 (pixel coordinates) cannot be normalised without
the image size, so they make the answer unparseable instead of being rescaled by guesswork.
"""

from __future__ import annotations

import re

from pydantic import ValidationError

from expvid.schema import Box, Item
from expvid.scoring.extraction.latex import find_boxed
from expvid.scoring.extraction.types import Extraction

_NUMBER = r"\s*(-?\d+(?:\.\d+)?|-?\.\d+)\s*"
_QUAD = re.compile(rf"{_NUMBER},{_NUMBER},{_NUMBER},{_NUMBER}")


def parse_boxes(text: str) -> list[Box] | str:
    """Every 4-number group as a Box, or a message saying why the text has no usable boxes."""
    boxes: list[Box] = []
    for match in _QUAD.finditer(text):
        values = [float(v) for v in match.groups()]
        if not all(0.0 <= v <= 1.0 for v in values):
            return f"coordinates {values} are not normalised to 0..1"
        try:
            boxes.append(Box(x1=values[0], y1=values[1], x2=values[2], y2=values[3]))
        except ValidationError:
            return f"box {values} has its corners out of order"
    return boxes or "no [x1, y1, x2, y2] group found"


def extract_boxes(text: str, item: Item) -> Extraction:
    """Boxes from the last `\\boxed{}` if there is one, else from the whole reply."""
    boxed = find_boxed(text)
    source, rule = (boxed[-1], "boxed") if boxed else (text, "whole_reply")
    parsed = parse_boxes(source)
    if isinstance(parsed, str):
        return Extraction.unparseable(parsed, rule=rule)
    return Extraction.found(parsed, rule)
