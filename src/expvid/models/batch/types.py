"""Provider-neutral views of a batch: where it is, how far it got, and what each request returned."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from expvid.models.retry import backoff_delay

#: First pause (seconds, doubling, full jitter, at most 30 s) before a batch endpoint call is repeated.
RETRY_BASE_S = 1.0
#: How many times a batch endpoint call is repeated (429 / 5xx / network errors) before it fails.
HTTP_RETRIES = 5
#: Clock difference allowed between this machine and the provider when listing back to a time.
CLOCK_SKEW = timedelta(minutes=10)


def retry_pause(attempt: int, rng: random.Random | None = None) -> float:
    """How long to wait before repeating a batch endpoint call for the `attempt`-th time (0-based)."""
    return backoff_delay(attempt, base_s=RETRY_BASE_S, max_s=30.0, rng=rng)


Provider = Literal["openai", "anthropic", "gemini"]


class BatchHandle(BaseModel):
    """What identifies a submitted batch at its provider (stored in the run directory)."""

    provider: Provider
    batch_id: str
    #: OpenAI: the uploaded input file (deleted once the batch has ended).
    input_file_id: str | None = None
    endpoint: str | None = None


class BatchLabel(BaseModel):
    """What a batch is created with so that it can be found again: the run, the chunk, the attempt.

    OpenAI keeps it as the batch's `metadata`, Gemini as its `displayName`; Anthropic's message
    batches have no field for it (they are found by creation time, request count and custom ids)."""

    run_uid: str
    chunk: str
    #: None: a chunk recorded before attempts were labelled (found by run and chunk alone).
    attempt: int | None = 1

    def metadata(self) -> dict[str, str]:
        labels = {"expvid_run": self.run_uid, "expvid_chunk": self.chunk}
        return labels if self.attempt is None else {**labels, "expvid_attempt": str(self.attempt)}

    def display_name(self) -> str:
        suffix = "" if self.attempt is None else f"-a{self.attempt}"
        return f"expvid-{self.run_uid}-{self.chunk}{suffix}"


class BatchState(BaseModel):
    """One poll's answer."""

    batch_id: str
    #: The provider's own status ("validating", "in_progress", "ended", ...).
    status: str
    #: True once nothing more will happen (completed, failed, expired, cancelled, ended).
    ended: bool
    counts: dict[str, int] = Field(default_factory=dict)
    #: Why the whole batch failed (OpenAI validation errors), else None.
    failure: str | None = None
    #: The provider refused the batch for its queue limit (OpenAI `token_limit_exceeded`): nothing
    #: ran and nothing was billed; the same requests can be submitted again once there is room.
    queue_refusal: str | None = None
    #: The organisation's enqueued-token limit, when the refusal states it.
    queue_limit_tokens: int | None = None
    created_at: datetime | None = None
    #: Requests in the batch (the provider's count), when it says.
    n_requests: int | None = None


class Lookup(BaseModel):
    """What a search for a batch whose creation was not recorded found."""

    #: Batches that are certainly the chunk's (their label matches).
    found: list[BatchHandle] = Field(default_factory=list)
    #: Batches that may be the chunk's and cannot be ruled out by what the listing shows (Anthropic:
    #: created in the window with the chunk's number of requests); settled by their custom ids.
    candidates: list[BatchHandle] = Field(default_factory=list)
    #: How many batches were listed to get there.
    listed: int = 0


class RequestError(BaseModel):
    """Why one request of a batch has no answer."""

    #: "expired" (not run within the window), "cancelled", "batch_failed" (the whole batch failed
    #: validation), "http" (answered with an error status), "missing" (absent from the results),
    #: "malformed" (a body that is not an answer).
    kind: str
    message: str
    status: int | None = None
    #: Whether asking again (online or in a new batch) can succeed.
    retryable: bool = True


class BatchResult(BaseModel):
    custom_id: str
    #: The answer's JSON body as the online endpoint returns it (None when it failed).
    body: dict[str, Any] | None = None
    error: RequestError | None = None

    @classmethod
    def failed(
        cls, custom_id: str, kind: str, message: str, *, retryable: bool = True, status: int | None = None
    ) -> BatchResult:
        """A request with no answer, and why (`RequestError`'s fields)."""
        error = RequestError(kind=kind, message=message, status=status, retryable=retryable)
        return cls(custom_id=custom_id, error=error)


def ordered_results(
    found: Mapping[str, BatchResult], custom_ids: list[str], *, kind: str, message: str
) -> list[BatchResult]:
    """One result per custom id, in their order; one the provider's results lack fails as `kind`
    (retryable: nothing is silently dropped)."""
    return [found.get(cid) or BatchResult.failed(cid, kind, message) for cid in custom_ids]


def create_failure(what: str, status: int, message: str, *, last: bool) -> BatchAPIError | None:
    """What a create call answered with an error `status` ends in: a 5xx may have created the batch
    (uncertain: look it up), a 429 is the provider's queue (tried again, then a queue refusal),
    another 4xx created nothing. None: a 429 to try again."""
    if status >= 500:
        return BatchAPIError(f"{what}: HTTP {status}: {message}", uncertain=True)
    if status != 429 or last:
        return BatchAPIError(f"{what}: HTTP {status}: {message}", queue_refusal=status == 429)
    return None


class BatchAPIError(RuntimeError):
    """A batch endpoint call that failed for good (after retries for 429 / 5xx / network errors).

    `uncertain`: a create call whose request may have reached the provider (the connection broke
    after it was sent, a 5xx, a timeout): the batch may exist, so it is looked up before anything
    is sent again. `queue_refusal`: the provider refused it for its queue limit (a 429 on create)."""

    def __init__(self, message: str, *, uncertain: bool = False, queue_refusal: bool = False) -> None:
        super().__init__(message)
        self.uncertain = uncertain
        self.queue_refusal = queue_refusal
