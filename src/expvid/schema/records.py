"""What a run produces: predictions, judgments and scores.

A prediction records what the model was actually shown (frame indices and timestamps) and what it
said, or why it said nothing. Failures are first-class: a failed request is a `Prediction` with an
`error`, never a placeholder string that a scorer could mistake for an answer.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat


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
    #: Of `prompt_tokens`, those the provider served from its prompt cache (OpenAI
    #: `cached_tokens`, Gemini `cachedContentTokenCount`): billed at the cached-input price.
    cache_read_tokens: int | None = None


class ErrorKind(StrEnum):
    MEDIA = "media"  # the video or image could not be read
    REQUEST = "request"  # the backend failed after its retries (HTTP error, refused, malformed body)
    TIMEOUT = "timeout"
    INVALID = "invalid"  # the record itself is malformed (no usable item); counted, never dropped
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
    #: Why generation stopped as the provider reported it ("stop", "length", "refusal", ...).
    #: Older run directories keep it in `meta["finish_reason"]`; read it through `stop_reason`.
    finish_reason: str | None = None
    #: The provider's refusal text (OpenAI `message.refusal`): a model answer, scored unparseable.
    refusal: str | None = None
    #: What was actually sent to the provider, after parameter rules and 400-driven fallbacks:
    #: e.g. {"temperature": 0.1 | None (not sent), "token_limit_field": "max_completion_tokens",
    #: "max_tokens": 8192, "reasoning_effort": "medium", "input_mode": "images", "max_side": 224}.
    sent: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.response is not None

    @property
    def stop_reason(self) -> str | None:
        """The finish reason, from the field or (older runs) from `meta`."""
        if self.finish_reason is not None:
            return self.finish_reason
        value = self.meta.get("finish_reason")
        return value if isinstance(value, str) else None

    @property
    def truncated(self) -> bool:
        """The answer was cut by the token limit (`finish_reason: length`)."""
        return self.stop_reason in ("length", "max_tokens", "MAX_TOKENS")


class ExtractionStatus(StrEnum):
    OK = "ok"
    UNPARSEABLE = "unparseable"  # a response came back but no answer of the right type was found
    FAILED = "failed"  # no response at all (the request failed)
    INVALID = "invalid"  # the record itself is malformed: no item to ask about (scored 0, counted)


class Judgment(BaseModel):
    """A judge's decision on one prediction; a line of `judgments.jsonl`.

    `verdicts` holds per-unit decisions (per blank for ExpVid level 3); `score` holds a graded value
    (a grade on the judge's scale: 0/1/2, 0-10). A judge that failed or replied with nonsense has `error` set and no
    verdicts: it is reported as a failure, not as a zero.
    """

    item_id: str
    task: str
    judge: str
    verdicts: list[bool] | None = None
    #: A graded judge's score; never NaN or infinite (a reply without a number is an error).
    score: FiniteFloat | None = None
    raw: str | None = None
    error: str | None = None
    cached: bool = False
    sample: int = 0
    #: Hash of what was judged (the extracted answer); a re-done prediction makes the judgment stale.
    input_sha256: str | None = None
    #: Why the judge's (last) reply stopped, as its provider said ("stop", "length", ...), and its
    #: token usage: a judge failure then says whether the budget went to reasoning.
    finish_reason: str | None = None
    usage: Usage | None = None
    #: What the judge's request really sent (token limit field and value, reasoning effort, ...).
    sent: dict[str, Any] = Field(default_factory=dict)
    #: Requests the judgment took (per-blank judging asks once per blank; retries add more).
    n_requests: int | None = None
    created_at: datetime = Field(default_factory=utc_now)

    @property
    def ok(self) -> bool:
        return self.error is None


class ItemScore(BaseModel):
    """The score of one item: `earned` out of `possible` units (blanks, or 1 for an MCQ).

    Both are finite numbers, always: a NaN or infinity (from a reply such as `[NaN, NaN, NaN, NaN]`)
    is refused here, so it can never be written as null into item_scores.jsonl / scores.json and
    cost a run its report. Extraction and metrics keep such values out in the first place.
    """

    item_id: str
    task: str
    status: ExtractionStatus
    extracted: Any = None
    earned: FiniteFloat
    possible: FiniteFloat = 1.0
    discipline: str | None = None
    video_id: str | None = None
    #: Set when the item needed a judge and the judge failed: scored 0, counted as n_judge_failed.
    judge_error: str | None = None


class CountedScore(BaseModel):
    """A score on a 0-100 scale over `n` items, with the counts that make failures visible (a task's
    or a level's)."""

    score: FiniteFloat
    n: int
    n_unparseable: int = 0
    n_failed: int = 0
    n_judge_failed: int = 0


class TaskScore(CountedScore):
    """Aggregate for one task: its counted score, and what its task file held besides the items."""

    #: Records in the task file (the denominator's source); None in scores written before it existed.
    n_records: int | None = None
    #: Records that could not be read as items (counted, scored 0).
    n_invalid: int = 0
    #: Answers cut by the token limit (`finish_reason: length`); still scored as they are.
    n_truncated: int = 0
    #: Failed items by `ErrorKind` value, e.g. {"media": 3, "request": 1}.
    failed_by_kind: dict[str, int] = Field(default_factory=dict)
    ci95: tuple[FiniteFloat, FiniteFloat] | None = None
