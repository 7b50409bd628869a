"""Turning answers and records into short, faithful text for lists and tables."""

from __future__ import annotations

import json
from typing import Any

from expvid.schema import Box, Item

#: How much of each run's response the list's text search looks through.
SEARCH_RESPONSE_CHARS = 2000


def answer_text(value: Any) -> str:
    """An answer value (gold or extracted) as one line: "B", "1, 3, 2", "xeno-free | live"."""
    if value is None:
        return ""
    if isinstance(value, Box):
        return _box(value.as_list())
    if isinstance(value, dict) and {"x1", "y1", "x2", "y2"} <= set(value):
        return _box([value["x1"], value["y1"], value["x2"], value["y2"]])
    if isinstance(value, list):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return ", ".join(str(v) for v in value)
        return " | ".join(answer_text(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _box(corners: list[Any]) -> str:
    return "[" + ", ".join(f"{float(c):.3f}" for c in corners) + "]"


def gold_text(item: Item | None) -> str:
    return "" if item is None else answer_text(item.answer)


def gold_json(item: Item) -> Any:
    """The gold answer as JSON (boxes as lists)."""
    value = item.answer
    if isinstance(value, list) and value and isinstance(value[0], Box):
        return [box.as_list() for box in value]
    return value


def jsonable(value: Any) -> Any:
    """Any record value as plain JSON (pydantic models dumped, unknown objects as text)."""
    try:
        return json.loads(json.dumps(value, default=_default))
    except (TypeError, ValueError):
        return str(value)


def _default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)


def extra_fields(raw: dict[str, Any], shown: set[str]) -> dict[str, Any]:
    """Fields of a record that no part of the page shows on its own: shown generically, so fields
    added by a newer expvid (or kept from an older one) are never invisible."""
    return {key: jsonable(value) for key, value in raw.items() if key not in shown}


def parse_judge_raw(raw: str | None) -> Any:
    """A judge's raw reply as JSON when it is JSON (the offline judge writes per-blank objects)."""
    if not raw:
        return None
    text = raw.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
