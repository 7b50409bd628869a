"""Benchmark items: one question with its media, options and gold answer.

One `Item` model serves every suite, built-in or installed. The `answer_type`
decides what shape `answer` must have, so that a scorer never has to guess whether "3" is a letter,
a step number or a blank.
"""

from __future__ import annotations

import re
import string
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, field_validator, model_validator

#: Option letters the suites use: ExpVid completeness verification goes up to J; ten-option
#: benchmarks use all of A-J.
OPTION_LETTERS: tuple[str, ...] = tuple(string.ascii_uppercase[:10])

#: A blank in a fill-in-the-blank question is a run of two or more underscores (formats.md: ExpVid
#: level-3 questions use runs of varying length, "__" up to "_______").
BLANK_PATTERN = re.compile(r"_{2,}")


class AnswerType(StrEnum):
    """What kind of answer an item expects; selects the extractor and the metric."""

    CHOICE = "choice"  # one option letter, A..J
    STEP_NUMBER = "step_number"  # one integer step number (ExpVid step prediction)
    STEP_SEQUENCE = "step_sequence"  # list of step numbers (ExpVid sequence generation)
    BLANKS = "blanks"  # one answer string per blank, in order (ExpVid level 3)
    FREE_TEXT = "free_text"  # open answer; gold is a list of acceptable answers (judged)
    BOXES = "boxes"  # list of boxes [x1, y1, x2, y2] in 0..1 (grounding)


class VideoRef(BaseModel):
    """A video file, optionally restricted to a [start, end] window in seconds.

    `path` is absolute once a loader has resolved it against the dataset root; `source_path` keeps
    the path as the release wrote it (it can leak answers, e.g. `clip_12_removed_step_2.mp4`, so it
    must never reach a model).
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["video"] = "video"
    path: str
    start: float | None = Field(default=None, ge=0)
    end: float | None = Field(default=None, gt=0)
    source_path: str | None = None

    @model_validator(mode="after")
    def _window_is_ordered(self) -> VideoRef:
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"video window end ({self.end}) must be after start ({self.start})")
        return self


class ImagesRef(BaseModel):
    """An ordered list of image files (an image question carries one or more)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["images"] = "images"
    paths: tuple[str, ...] = Field(min_length=1)


MediaRef = Annotated[VideoRef | ImagesRef, Field(discriminator="kind")]


class Box(BaseModel):
    """An axis-aligned box with coordinates normalised to 0..1 (`[x1, y1, x2, y2]`)."""

    model_config = ConfigDict(frozen=True)

    x1: FiniteFloat
    y1: FiniteFloat
    x2: FiniteFloat
    y2: FiniteFloat

    @model_validator(mode="after")
    def _ordered(self) -> Box:
        if self.x2 < self.x1 or self.y2 < self.y1:
            raise ValueError(f"box corners out of order: {self.as_list()}")
        return self

    def as_list(self) -> list[float]:
        return [self.x1, self.y1, self.x2, self.y2]

    @property
    def area(self) -> float:
        return max(0.0, self.x2 - self.x1) * max(0.0, self.y2 - self.y1)


AnswerValue = str | int | list[int] | list[str] | list[Box]


def count_blanks(question: str) -> int:
    """Number of blanks in a fill-in-the-blank question (runs of 2+ underscores)."""
    return len(BLANK_PATTERN.findall(question))


class Item(BaseModel):
    """One benchmark question.

    `id` is unique within a loaded dataset (loaders build it so: ExpVid uses `"{task}/{source id}"`
    because the release's ids are per file); `source_id` is the id as the release wrote it.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    source_id: str | None = None
    suite: str
    task: str
    level: int | None = None
    discipline: str | None = None
    media: MediaRef | None = None
    question: str
    options: dict[str, str] | None = None
    answer: AnswerValue
    answer_type: AnswerType
    #: Text the model does not see in the main setting (ExpVid `asr_caption`); ablations may add it.
    context: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _letters_in_order(cls, options: dict[str, str] | None) -> dict[str, str] | None:
        if options is None:
            return None
        letters = list(options)
        bad = [letter for letter in letters if letter not in OPTION_LETTERS]
        if bad:
            raise ValueError(f"option keys must be letters A-J, got {bad}")
        if letters != sorted(letters):
            options = {letter: options[letter] for letter in sorted(letters)}
        return options

    @model_validator(mode="after")
    def _answer_matches_type(self) -> Item:
        kind, answer = self.answer_type, self.answer
        if kind is AnswerType.CHOICE:
            if not isinstance(answer, str) or not self.options or answer not in self.options:
                raise ValueError(
                    f"choice answer {answer!r} is not one of the options {list(self.options or {})}"
                )
        elif kind is AnswerType.STEP_NUMBER:
            if not isinstance(answer, int) or isinstance(answer, bool):
                raise ValueError(f"step_number answer must be an integer, got {answer!r}")
        elif kind is AnswerType.STEP_SEQUENCE:
            if (
                not isinstance(answer, list)
                or not answer
                or not all(isinstance(a, int) and not isinstance(a, bool) for a in answer)
            ):
                raise ValueError(f"step_sequence answer must be a non-empty list of integers, got {answer!r}")
        elif kind in (AnswerType.BLANKS, AnswerType.FREE_TEXT):
            if not isinstance(answer, list) or not answer or not all(isinstance(a, str) for a in answer):
                raise ValueError(f"{kind.value} answer must be a non-empty list of strings, got {answer!r}")
            if kind is AnswerType.BLANKS:
                blanks = count_blanks(self.question)
                if blanks != len(answer):
                    raise ValueError(
                        f"question has {blanks} blank(s) (runs of 2+ underscores) but the answer has "
                        f"{len(answer)} entr{'y' if len(answer) == 1 else 'ies'}"
                    )
        elif kind is AnswerType.BOXES and (
            not isinstance(answer, list) or not answer or not all(isinstance(a, Box) for a in answer)
        ):
            raise ValueError(f"boxes answer must be a non-empty list of boxes, got {answer!r}")
        return self

    @property
    def n_blanks(self) -> int:
        """Blanks to fill (level-3 items); 0 for other answer types."""
        return len(self.answer) if self.answer_type is AnswerType.BLANKS else 0  # type: ignore[arg-type]
