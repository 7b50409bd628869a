"""The JSON each prompt must return, as pydantic models: the first gate every reply passes.

Models are lenient about what does not matter (extra fields, "A" vs "a", numbers as strings) and
strict about what does (four distinct non-empty options, a known answer letter, scores in range), so
that a retry is spent only on replies that are really unusable. Stage-specific rules (a distractor
that must be a permutation, a timestamp that must be a cue boundary) live in the stage modules.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

LETTERS4 = ("A", "B", "C", "D")
_SPACES = re.compile(r"\s+")


def norm_text(text: str) -> str:
    """Whitespace-collapsed, case-folded text for comparisons (never for output)."""
    return _SPACES.sub(" ", text).strip().casefold()


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _letter(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip().strip("().").upper()
    return value


def four_lettered(options: dict[str, str]) -> dict[str, str]:
    """The options keyed A, B, C, D in that order (letters read leniently), or why they are not four."""
    options = {key.strip().upper(): text for key, text in options.items()}
    if sorted(options) != list(LETTERS4):
        raise ValueError(f"options must be exactly A, B, C and D, got {sorted(options)}")
    return {letter: options[letter] for letter in LETTERS4}


Text = Annotated[str, BeforeValidator(_stripped), Field(min_length=1)]
Letter = Annotated[Literal["A", "B", "C", "D"], BeforeValidator(_letter)]
Score = Annotated[float, Field(ge=0, le=5)]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


# --- curation (3.1) -----------------------------------------------------------------------------


class TranscriptScores(_Lenient):
    continuity: Score
    alignment: Score
    clarity: Score
    integrity: Score
    focus: Score
    comment: str | None = None

    def criteria(self) -> dict[str, float]:
        """The five scores by criterion name, in the paper's order (the comment left out)."""
        return self.model_dump(exclude={"comment"})


# --- Level 1 (G.1) ------------------------------------------------------------------------------


def _string_list(value: Any) -> Any:
    if value is None:
        return []
    return value


class MaterialList(_Lenient):
    materials: Annotated[list[str], BeforeValidator(_string_list)]


class ToolList(_Lenient):
    tools: Annotated[list[str], BeforeValidator(_string_list)]


class FourOptionMCQ(_Lenient):
    """Four options A-D, distinct and non-empty, and an answer letter (G.1.2, G.1.4, G.1.5, G.1.7)."""

    question: Text
    options: dict[str, Text]
    answer: Letter

    @field_validator("options")
    @classmethod
    def _four_distinct(cls, options: dict[str, str]) -> dict[str, str]:
        options = four_lettered(options)
        if len({norm_text(t) for t in options.values()}) != 4:
            raise ValueError("two options have the same text")
        return options

    @property
    def correct(self) -> str:
        return self.options[self.answer]

    @property
    def distractors(self) -> list[str]:
        return [text for letter, text in self.options.items() if letter != self.answer]


class QuantityMCQ(_Lenient):
    """G.1.5: an MCQ, or `{"question": null}` when the caption holds no quantity."""

    question: str | None = None
    options: dict[str, Any] | None = None
    answer: str | None = None

    def mcq(self) -> FourOptionMCQ | None:
        if self.question is None or not self.question.strip():
            return None
        return FourOptionMCQ.model_validate(self.model_dump())


class OperationAlignment(_Lenient):
    """G.1.6, with the prompt's own consistency rules enforced."""

    has_operation: bool
    visible_action: bool
    alignment_score: Annotated[int, Field(ge=0, le=5)]

    @model_validator(mode="after")
    def _rules(self) -> OperationAlignment:
        if not self.has_operation and (self.visible_action or self.alignment_score != 0):
            raise ValueError("with has_operation=false, visible_action must be false and alignment_score 0")
        if self.has_operation and self.alignment_score < 1:
            raise ValueError("with has_operation=true, alignment_score must be in 1..5")
        return self


# --- Level 2 (G.2) ------------------------------------------------------------------------------

TimeValue = Annotated[str | float | int, Field(union_mode="left_to_right")]


class SegmentDraft(_Lenient):
    start_time: TimeValue
    end_time: TimeValue
    title: Text
    description: str = ""


class SegmentList(BaseModel):
    """G.2.1 returns a JSON list; a wrapper object holding one list is accepted too."""

    segments: list[SegmentDraft] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"segments": value}
        if isinstance(value, dict) and "segments" not in value:
            lists = [v for v in value.values() if isinstance(v, list)]
            if len(lists) == 1:
                return {"segments": lists[0]}
        return value


class AtomicStep(_Lenient):
    step_number: int | None = None
    action: Text
    start_time: TimeValue | None = None
    end_time: TimeValue | None = None


class StepList(BaseModel):
    """G.2.2: steps, or null ("If subtitles contain no experimental operation, return null")."""

    model_config = ConfigDict(extra="ignore")

    atomic_steps: list[AtomicStep] | None = None
    total_steps: int | None = None
    confidence: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _null(cls, value: Any) -> Any:
        return {"atomic_steps": None} if value is None else value


class OrderingMCQ(_Lenient):
    """G.2.3: four step lists; the correct letter is `correct_answer` (or `answer`)."""

    question: str = ""
    options: dict[str, Text]
    correct_answer: Letter

    @model_validator(mode="before")
    @classmethod
    def _answer_alias(cls, value: Any) -> Any:
        if isinstance(value, dict) and "correct_answer" not in value and "answer" in value:
            value = {**value, "correct_answer": value["answer"]}
        return value

    @field_validator("options")
    @classmethod
    def _four(cls, options: dict[str, str]) -> dict[str, str]:
        return four_lettered(options)


# --- Level 3 ------------------------------------------------------------------------------------


class Finding(_Lenient):
    statement: Text
    section: str = ""


class Findings(_Lenient):
    findings: list[Finding] = Field(min_length=1)


class BlankDraft(_Lenient):
    question: Text
    answers: list[str] = Field(min_length=1)
    section: str = ""


class BlankDrafts(_Lenient):
    experimental_conclusion: list[BlankDraft] = Field(default_factory=list)
    scientific_discovery: list[BlankDraft] = Field(default_factory=list)

    @model_validator(mode="after")
    def _some(self) -> BlankDrafts:
        if not self.experimental_conclusion and not self.scientific_discovery:
            raise ValueError("no questions in either list")
        return self
