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
    #: 100,000 / 256 MB Anthropic).
    max_requests: int | None = Field(default=None, ge=1)
    max_bytes: int | None = Field(default=None, ge=4096)
    #: How requests a batch did not answer (expired, cancelled, failed batch, server errors) are
    #: asked again: "online" (at full price, now) or "batch" (a new batch, up to `max_rounds`
    #: rounds, then online).
    retry: Literal["online", "batch"] = "online"
    max_rounds: int = Field(default=3, ge=1)
