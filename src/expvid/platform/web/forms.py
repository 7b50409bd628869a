"""Turning submitted forms (and API JSON) into service inputs, with errors a reviewer can act on."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import FormData

from expvid.platform.db.models import Item
from expvid.platform.services.content import Content, clean_text, same_content
from expvid.platform.services.errors import InvalidInput
from expvid.platform.services.level2 import StepRow, normalized_rows
from expvid.platform.services.review import DecisionInput
from expvid.platform.services.tasks import task_spec
from expvid.platform.web.api_models import DecisionBody, PreviewBody, parse_body

_SPLIT_NUMBERS = re.compile(r"[,\s;]+")


def _text(form: FormData | Mapping[str, Any], name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _int(form: FormData | Mapping[str, Any], name: str, default: int | None = None) -> int:
    raw = form.get(name)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lstrip("-").isdigit() and len(raw.strip()) <= 10:
        return int(raw)
    if default is not None:
        return default
    raise InvalidInput([f"the form field {name!r} is missing or not a number; reload the page"])


def _like(template: Any, text: str) -> Any:
    """A step number typed like the release's answer (integer, or numeric string)."""
    if isinstance(template, int) and not isinstance(template, bool) and text.isdigit():
        return int(text)
    return text


def content_from_form(item: Item, form: FormData | Mapping[str, Any]) -> Content:
    spec = task_spec(item.task)
    question = clean_text(_text(form, "question"))
    options: dict[str, str] | None = None
    if spec.kind == "mcq":
        letters = sorted(
            key.removeprefix("option_")
            for key in form
            if key.startswith("option_") and len(key) == len("option_A")
        )
        options = {letter: clean_text(_text(form, f"option_{letter}")) for letter in letters}
        answer: Any = _text(form, "answer").strip()
    elif spec.kind == "step_list":
        template = item.answer[0] if isinstance(item.answer, list) and item.answer else "1"
        answer = [_like(template, part) for part in _SPLIT_NUMBERS.split(_text(form, "answer")) if part]
    elif spec.kind == "step_number":
        answer = _like(item.answer, _text(form, "answer").strip())
    else:
        answer = [line.strip() for line in _text(form, "answers").splitlines() if line.strip()]
    return Content(question=question, options=options, answer=answer)


def _float_or_none(raw: str, label: str, problems: list[str]) -> float | None:
    raw = raw.strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or len(raw) > 32:
        problems.append(f"{label}: {raw[:32]!r} is not a time in seconds")
        return None
    return value


def rows_from_form(form: FormData) -> list[StepRow]:
    """Step rows from parallel form lists; rows marked "remove" and blank new rows are dropped."""
    refs = form.getlist("step_ref")
    texts = form.getlist("step_text")
    starts = form.getlist("step_start")
    ends = form.getlist("step_end")
    actions = form.getlist("step_action")
    if not len(refs) == len(texts) == len(starts) == len(ends) == len(actions):
        raise InvalidInput(["the step table was submitted incompletely; reload the page"])
    rows: list[StepRow] = []
    problems: list[str] = []
    for position, (ref, text, start, end, action) in enumerate(
        zip(refs, texts, starts, ends, actions, strict=True), start=1
    ):
        ref, text = str(ref).strip(), str(text)
        if action == "remove" or (not ref and not text.strip()):
            continue
        label = f"row {position}"
        rows.append(
            StepRow(
                ref=int(ref) if ref.isdigit() and len(ref) < 7 else None,
                text=clean_text(text),
                start=_float_or_none(str(start), label, problems),
                end=_float_or_none(str(end), label, problems),
            )
        )
    if problems:
        raise InvalidInput(problems)
    return rows


def rows_from_json(raw: Any) -> list[StepRow]:
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise InvalidInput(["'steps' must be a list of {ref, text, start, end} objects"])
    body = parse_body(PreviewBody, {"steps": raw})
    return [row.row() for row in body.steps]


def decision_from_form(
    item: Item, form: FormData, *, step_editor: bool, current_rows: list[StepRow]
) -> DecisionInput:
    verdict = _text(form, "verdict")
    content: Content | None = None
    rows: list[StepRow] | None = None
    if step_editor:
        rows = rows_from_form(form)
        changed = normalized_rows(rows) != normalized_rows(current_rows)
    else:
        content = content_from_form(item, form)
        changed = not same_content(content, Content(item.question, item.options, item.answer))
    if verdict == "approve" and changed:
        raise InvalidInput(
            ["you changed the item but chose approve: choose edit to propose the change, or undo it"]
        )
    # Rejecting the question while correcting the segment's steps: the correction is kept.
    keeps_rows = verdict == "edit" or (verdict == "reject" and step_editor and changed)
    return DecisionInput(
        verdict=verdict,
        justification=_text(form, "justification"),
        item_version=_int(form, "item_version"),
        decision_version=_int(form, "decision_version", 0),
        content=content if verdict == "edit" else None,
        rows=rows if keeps_rows else None,
    )


def decision_from_json(item: Item, raw: Mapping[str, Any], *, step_editor: bool) -> DecisionInput:
    body = parse_body(DecisionBody, dict(raw))
    content = rows = None
    if body.verdict == "edit":
        if step_editor:
            if body.steps is None:
                raise InvalidInput(["an edit of a Level-2 item needs 'steps' (the edited step list)"])
            rows = [r.row() for r in body.steps]
        else:
            if body.content is None:
                raise InvalidInput(["'content' must be an object with question, options and answer"])
            content = body.content.content()
    elif body.verdict == "reject" and step_editor and body.steps is not None:
        rows = [r.row() for r in body.steps]
    return DecisionInput(
        verdict=body.verdict,
        justification=body.justification,
        item_version=body.item_version,
        decision_version=body.decision_version,
        content=content,
        rows=rows,
    )


def echo(form: FormData) -> dict[str, Any]:
    """What the reviewer typed, to show again after an error (nothing typed is lost)."""
    data: dict[str, Any] = {}
    for key in form:
        if key == "csrf_token":
            continue
        values = form.getlist(key)
        data[key] = values if key.startswith("step_") else (values[0] if values else "")
    return data
