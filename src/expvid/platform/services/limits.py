"""Per-field length limits on what reviewers type (see `InputLimits` for why they exist).

Lengths are counted after Windows newlines are unified, as the text is stored. Every problem names
the field and both numbers, so the form can say exactly what to shorten.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from expvid.platform.config import InputLimits
from expvid.platform.services.content import Content
from expvid.platform.services.level2 import StepRow

DEFAULT_LIMITS = InputLimits()


def _length(text: str) -> int:
    return len(text.replace("\r\n", "\n"))


def too_long(label: str, text: Any, limit: int) -> list[str]:
    """One problem if `text` exceeds `limit` characters, else none."""
    if not isinstance(text, str):
        return []
    n = _length(text)
    if n <= limit:
        return []
    return [f"{label} has {n:,} characters; at most {limit:,} are allowed"]


def content_problems(content: Content, limits: InputLimits) -> list[str]:
    problems = too_long("the question", content.question, limits.question)
    for letter, text in (content.options or {}).items():
        problems += too_long(f"option {letter}", text, limits.option)
    answers = content.answer if isinstance(content.answer, list) else [content.answer]
    for position, answer in enumerate(answers, start=1):
        label = "the answer" if len(answers) == 1 else f"answer {position}"
        problems += too_long(label, answer, limits.answer)
    return problems


def rows_problems(texts: Sequence[str], limits: InputLimits) -> list[str]:
    problems = []
    if len(texts) > limits.steps:
        problems.append(f"the step list has {len(texts)} rows; at most {limits.steps} are allowed")
    for position, text in enumerate(texts, start=1):
        problems += too_long(f"step row {position}", text, limits.step_text)
    return problems


def submission_problems(
    justification: str, content: Content | None, rows: Sequence[StepRow] | None, limits: InputLimits
) -> list[str]:
    """The fields of a review decision or an adjudication that are too long (checked before anything
    else is looked at): the justification, and the edited content or step list where there is one."""
    problems = too_long("the justification", justification, limits.justification)
    if content is not None:
        problems += content_problems(content, limits)
    if rows is not None:
        problems += rows_problems([r.text for r in rows], limits)
    return problems
