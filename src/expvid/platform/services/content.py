"""The reviewable content of an item (question, options, answer): validation and comparison.

Validation follows the release format (formats.md) and the paper's rules: Level-1 and step ordering
are four-option MCQs, completeness verification has 3-10 options that name step numbers, sequence
generation answers are step numbers, Level-3 questions have one precise answer per blank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from expvid.platform.services.tasks import task_spec
from expvid.schema import OPTION_LETTERS, count_blanks

_SPACES = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class Content:
    question: str
    options: dict[str, str] | None
    answer: Any

    def as_dict(self) -> dict[str, Any]:
        return {"question": self.question, "options": self.options, "answer": self.answer}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Content:
        return cls(question=data["question"], options=data.get("options"), answer=data.get("answer"))


class ContentError(ValueError):
    """Content that breaks the task's rules; `problems` lists every rule broken, for the form."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _is_step_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= 1
    return isinstance(value, str) and value.strip().isdigit() and int(value) >= 1


def content_problems(task: str, content: Content) -> list[str]:
    """Every rule `content` breaks for `task` (empty when valid)."""
    spec = task_spec(task)
    problems: list[str] = []
    if not content.question.strip():
        problems.append("the question is empty")
    if spec.kind == "mcq":
        options = content.options or {}
        letters = list(options)
        expected = list(OPTION_LETTERS[: len(letters)])
        if letters != expected:
            problems.append(
                f"options must be lettered {', '.join(expected) or 'A, B, ...'} in order, got {letters}"
            )
        if spec.n_options is not None and len(letters) != spec.n_options:
            problems.append(
                f"{spec.title} questions have exactly {spec.n_options} options, got {len(letters)}"
            )
        if spec.n_options is None and not 3 <= len(letters) <= 10:
            problems.append(f"{spec.title} questions have 3 to 10 options, got {len(letters)}")
        empty = [letter for letter, text in options.items() if not str(text).strip()]
        if empty:
            problems.append(f"option(s) {', '.join(empty)} are empty")
        texts = [_SPACES.sub(" ", str(text)).strip().casefold() for text in options.values()]
        if len(set(texts)) != len(texts):
            problems.append("two options have the same text")
        if task == "video_verification" and not all(_is_step_number(text) for text in options.values()):
            problems.append("completeness verification options must be step numbers")
        if not isinstance(content.answer, str) or content.answer not in options:
            problems.append(f"the answer must be one of the option letters {letters}, got {content.answer!r}")
    elif spec.kind == "step_list":
        answer = content.answer
        if not isinstance(answer, list) or not answer or not all(_is_step_number(a) for a in answer):
            problems.append(f"the answer must be a non-empty list of step numbers, got {answer!r}")
        elif len({int(a) for a in answer}) != len(answer):
            problems.append("the answer lists a step number twice")
    elif spec.kind == "step_number":
        if not _is_step_number(content.answer):
            problems.append(f"the answer must be one step number, got {content.answer!r}")
    elif spec.kind == "blanks":
        blanks = count_blanks(content.question)
        answer = content.answer
        if blanks == 0:
            problems.append("the question has no blank (a blank is a run of two or more underscores)")
        if not isinstance(answer, list) or not all(isinstance(a, str) for a in answer):
            problems.append("the answer must be a list of strings, one per blank")
        else:
            if len(answer) != blanks:
                problems.append(f"the question has {blanks} blank(s) but {len(answer)} answer(s) were given")
            if any(not a.strip() for a in answer):
                problems.append("every blank needs a non-empty answer")
            if any("\n" in a for a in answer):
                problems.append("an answer must be one line (one precise answer per blank)")
    return problems


def validate_content(task: str, content: Content) -> Content:
    problems = content_problems(task, content)
    if problems:
        raise ContentError(problems)
    return content


def _norm_text(text: str) -> str:
    lines = [_SPACES.sub(" ", line).strip() for line in text.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip()


def _norm_value(value: Any) -> Any:
    if isinstance(value, str):
        return _norm_text(value)
    if isinstance(value, list):
        return [_norm_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm_value(v) for k, v in sorted(value.items())}
    return value


def normalized(content: dict[str, Any] | Content) -> dict[str, Any]:
    """Content with whitespace normalised, for deciding whether two reviewers proposed the same thing."""
    data = content.as_dict() if isinstance(content, Content) else content
    return {key: _norm_value(value) for key, value in sorted(data.items())}


def same_content(a: dict[str, Any] | Content, b: dict[str, Any] | Content) -> bool:
    return normalized(a) == normalized(b)


def clean_text(text: str) -> str:
    """Form text as stored: Windows newlines unified, trailing spaces on lines and at the ends removed."""
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").split("\n")).strip()
