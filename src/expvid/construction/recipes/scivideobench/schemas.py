"""The JSON each role must return (lenient about form, strict about what the pipeline relies on)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})(?:\.\d+)?\s*$")


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(_stripped), Field(min_length=1)]


def clock_seconds(text: str) -> float:
    """ "mm:ss" -> seconds; ValueError otherwise."""
    match = _CLOCK.match(text)
    if not match or int(match.group(2)) >= 60:
        raise ValueError(f"expected a time as mm:ss, got {text!r}")
    return int(match.group(1)) * 60 + int(match.group(2))


def clock(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"{whole // 60:02d}:{whole % 60:02d}"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Span(_Lenient):
    start: Text
    end: Text | None = None
    what: str | None = None

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str | None) -> str | None:
        if value is not None:
            clock_seconds(value)
        return value


class Operation(_Lenient):
    description: Text
    start: str | None = None
    end: str | None = None


class Number(_Lenient):
    quantity: Text
    value: float | str | None = None
    unit: str | None = None
    time: str | None = None
    spoken_only: bool | None = None


class Analysis(_Lenient):
    core_question: Text
    theory: list[Text] = Field(default_factory=list)
    operations: list[Operation] = Field(default_factory=list)
    numbers: list[Number] = Field(default_factory=list)


QuestionType = Literal["conceptual", "hypothetical", "quantitative"]


def _lower(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip().lower().removesuffix(" reasoning")
    return value


class DraftQuestion(_Lenient):
    type: Annotated[QuestionType, BeforeValidator(_lower)]
    question: Text
    answer: str | None = None
    distractors: list[Text] | None = None
    value: float | None = None
    unit: str | None = None
    decimals: int | None = Field(default=None, ge=0, le=6)
    #: The question is about a reading's precision: distractors one display step away are the point.
    about_precision: bool = False
    evidence: list[Span] = Field(default_factory=list)


class Generated(_Lenient):
    questions: list[DraftQuestion] = Field(min_length=1)


def _letter(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip().strip("().").upper() or None
    return value


class Evaluation(_Lenient):
    answerable: bool
    answer: Annotated[str | None, BeforeValidator(_letter)] = None
    rationale: Text


class Cue(_Lenient):
    cue: Text
    visible: bool
    start: str | None = None
    end: str | None = None
    spoken: bool = False
    value: str | float | None = None


class Comparison(_Lenient):
    cues: list[Cue] = Field(min_length=1)
    grounded: bool


class Refined(_Lenient):
    question: Text
    distractors: list[Text] | None = None
