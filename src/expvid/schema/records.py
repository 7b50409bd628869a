"""What a run produces: predictions, judgments and scores.

A prediction records what the model was actually shown (frame indices and timestamps) and what it
said, or why it said nothing. Failures are first-class: a failed request is a `Prediction` with an
`error`, never a placeholder string that a scorer could mistake for an answer.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def utc_now() -> datetime:
    return datetime.now(UTC)


class FrameRef(BaseModel):
    """One frame sent to a model: its index in the decoded stream and its presentation time."""

    model_config = ConfigDict(frozen=True)

    index: int = Field(ge=0)
    time: float


class Usage(BaseModel):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None


class ErrorKind(StrEnum):
    MEDIA = "media"  # the video or image could not be read
    REQUEST = "request"  # the backend failed after its retries (HTTP error, refused, malformed body)
    TIMEOUT = "timeout"
    OTHER = "other"


class Prediction(BaseModel):
    """One model answer (or failure) for one item; a line of `predictions.jsonl`."""

    item_id: str
    task: str
    model: str
    response: str | None = None
    reasoning: str | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    frames: list[FrameRef] = Field(default_factory=list)
    n_images: int = 0
    latency_s: float | None = None
    usage: Usage | None = None
    cached: bool = False
    request_hash: str | None = None
    sample: int = 0  # index of the sample when n samples per item are drawn (pass@k)
    created_at: datetime = Field(default_factory=utc_now)
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.response is not None


class ExtractionStatus(StrEnum):
    OK = "ok"
    UNPARSEABLE = "unparseable"  # a response came back but no answer of the right type was found
    FAILED = "failed"  # no response at all (the request failed)


class Judgment(BaseModel):
    """A judge's decision on one prediction; a line of `judgments.jsonl`.

    `verdicts` holds per-unit decisions (per blank for ExpVid level 3); `score` holds a graded value
    (ProMQA 0/1/2, SFE 0-10). A judge that failed or replied with nonsense has `error` set and no
    verdicts: it is reported as a failure, not as a zero.
    """

    item_id: str
    task: str
    judge: str
    verdicts: list[bool] | None = None
    score: float | None = None
    raw: str | None = None
    error: str | None = None
    cached: bool = False
    sample: int = 0
    #: Hash of what was judged (the extracted answer); a re-done prediction makes the judgment stale.
    input_sha256: str | None = None
    created_at: datetime = Field(default_factory=utc_now)

    @property
    def ok(self) -> bool:
        return self.error is None


class ItemScore(BaseModel):
    """The score of one item: `earned` out of `possible` units (blanks, or 1 for an MCQ)."""

    item_id: str
    task: str
    status: ExtractionStatus
    extracted: Any = None
    earned: float
    possible: float = 1.0
    discipline: str | None = None
    video_id: str | None = None
    #: Set when the item needed a judge and the judge failed: scored 0, counted as n_judge_failed.
    judge_error: str | None = None


class TaskScore(BaseModel):
    """Aggregate for one task: `score` on a 0-100 scale, with counts that make failures visible."""

    score: float
    n: int
    n_unparseable: int = 0
    n_failed: int = 0
    n_judge_failed: int = 0
    ci95: tuple[float, float] | None = None
