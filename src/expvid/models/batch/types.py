"""Provider-neutral views of a batch: where it is, how far it got, and what each request returned."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class BatchHandle(BaseModel):
    """What identifies a submitted batch at its provider (stored in the run directory)."""

    provider: Literal["openai", "anthropic"]
    batch_id: str
    #: OpenAI: the uploaded input file (deleted once the batch has ended).
    input_file_id: str | None = None
    endpoint: str | None = None


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
