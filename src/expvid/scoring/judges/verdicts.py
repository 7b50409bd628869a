"""Reading a judge model's verdict list out of whatever it actually replied.

Judges are asked for `{"verdicts": [true, false, ...]}` but reply with code fences, a sentence
before or after, Python literals (`True`), single quotes, "yes"/"no" strings or a bare list. All
of those are read; anything else - or the wrong number of verdicts - raises `VerdictError` with a
message that can be shown to the judge when asking it again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from expvid.scoring.extraction.reasoning import split_reasoning

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRUE = {"true", "yes", "correct", "right", "1", "y", "t"}
_FALSE = {"false", "no", "incorrect", "wrong", "0", "n", "f"}


class VerdictError(ValueError):
    """The judge's reply holds no usable verdict list; the message says what was wrong."""


def _balanced_spans(text: str, opening: str, closing: str) -> list[str]:
    spans: list[str] = []
    for start, char in enumerate(text):
        if char != opening:
            continue
        depth = 0
        in_string: str | None = None
        for end in range(start, len(text)):
            c = text[end]
            if in_string:
                if c == "\\":
                    continue
                if c == in_string and text[end - 1] != "\\":
                    in_string = None
                continue
            if c in "\"'" and opening == "{":
                in_string = c
            elif c == opening:
                depth += 1
            elif c == closing:
                depth -= 1
                if depth == 0:
                    spans.append(text[start : end + 1])
                    break
    return spans


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        relaxed = re.sub(r"\bTrue\b", "true", candidate)
        relaxed = re.sub(r"\bFalse\b", "false", relaxed)
        relaxed = relaxed.replace("'", '"')
        relaxed = re.sub(r",\s*([\]}])", r"\1", relaxed)
        try:
            return json.loads(relaxed)
        except json.JSONDecodeError:
            return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    return None


def _verdict_list(value: Any) -> list[Any] | None:
    if isinstance(value, dict):
        for key in ("verdicts", "verdict", "judgments", "results", "correct"):
            if isinstance(value.get(key), list):
                return list(value[key])
        for key in ("verdict", "correct"):  # one blank judged: {"correct": true}
            if isinstance(value.get(key), bool):
                return [value[key]]
        return None
    if isinstance(value, list):
        return value
    return None


def parse_verdicts(reply: str | None, expected: int) -> list[bool]:
    """The verdict list in `reply`; `VerdictError` unless exactly `expected` booleans are found.

    The last well-formed list wins (judges sometimes restate an example before the answer).
    """
    if reply is None or not reply.strip():
        raise VerdictError("the reply was empty")
    text, _ = split_reasoning(reply)
    if not text:
        raise VerdictError("the reply holds only reasoning, no verdicts after it")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    candidates += _balanced_spans(text, "{", "}") + _balanced_spans(text, "[", "]")
    problems: list[str] = []
    found: list[list[bool]] = []
    for candidate in candidates:
        raw = _verdict_list(_loads(candidate.strip()))
        if raw is None:
            continue
        values = [_as_bool(v) for v in raw]
        if any(v is None for v in values):
            problems.append(f"non-boolean verdicts in {candidate.strip()[:80]!r}")
            continue
        if len(values) != expected:
            problems.append(f"{len(values)} verdict(s) where {expected} were asked for")
            continue
        found.append([bool(v) for v in values])
    if found:
        return found[-1]
    if problems:
        raise VerdictError("; ".join(dict.fromkeys(problems)))
    raise VerdictError('no JSON object of the form {"verdicts": [true, false, ...]} was found')
