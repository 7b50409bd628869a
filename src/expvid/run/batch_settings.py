"""`--batch` settings (a light module: the run configuration imports it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class BatchSettings(BaseModel):
    """`--batch` and its options: how a run uses a provider's batch API."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Poll until every batch has ended and merge the results (False: submit, record, return; the
    #: same command later, from any process or machine, collects them).
    wait: bool = True
    #: Seconds between polls of the open batches.
    poll_interval_s: float = Field(default=30.0, gt=0)
    #: Requests / bytes per batch, at most the provider's limits (50,000 / 200 MB OpenAI,
    #: 100,000 / 256 MB Anthropic, 20 MB of inline requests Gemini).
    max_requests: int | None = Field(default=None, ge=1)
    max_bytes: int | None = Field(default=None, ge=4096)
    #: How requests a batch did not answer (expired, cancelled, failed batch, server errors) are
    #: asked again: "online" (at full price, now) or "batch" (a new batch, up to `max_rounds`
    #: rounds, then online).
    retry: Literal["online", "batch"] = "online"
    max_rounds: int = Field(default=3, ge=1)
    #: The organisation's OpenAI usage tier (1-5): chunks are sized to the documented batch queue
    #: limit of the model at that tier (`models.batch.limits.QUEUE_LIMITS`).
    tier: int | None = Field(default=None, ge=1, le=5)
    #: The organisation's enqueued-token limit for the model, over the tier's documented one.
    queue_tokens: int | None = Field(default=None, ge=1)
    #: What a chunk refused for the queue limit does: "wait" (until the run's own batches free room,
    #: or `queue_wait_s`, then submitted again) or "online" (asked online now, at the full price).
    on_queue_limit: Literal["wait", "online"] = "wait"
    queue_wait_s: float = Field(default=600.0, gt=0)
    #: What to do with a batch found at the provider that may be a chunk's lost creation and cannot
    #: be ruled out (Anthropic, where only results name their requests): "cancel" it (its unrun
    #: requests are never billed; its results, once ended, say whether it was the chunk's) or "wait"
    #: for it to end and settle it by its results (never cancels someone else's batch; slower).
    uncertain: Literal["cancel", "wait"] = "cancel"
