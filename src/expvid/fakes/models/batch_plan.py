"""What a batch desk needs of the loopback server, and how its batches proceed (`BatchPlan`).

Kept below `batch` (OpenAI and Anthropic) and `gemini_batch` so that both depend on these shapes,
not on each other or on the server that mounts them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import Response


class AnsweringServer(Protocol):
    """The server the batch endpoints answer through (`LoopbackServer`)."""

    api_key: str | None

    @property
    def url(self) -> str: ...

    def answer_now(
        self, protocol: str, path: str, body: Any, *, via: str, model: str = ""
    ) -> tuple[int, dict[str, Any]]: ...


@dataclass
class BatchPlan:
    """How the loopback's batches proceed (set `server.batches.plan`).

    `polls_per_status`: retrieve calls a batch stays in each status before it moves on.
    `outcome`: "complete"; "expire" (after running the first `run_before_expiry` requests, or
    those `expires` does not pick: a predicate on the request's body); "fail" (validation
    fails); "stall" (stays in progress until cancelled).
    """

    polls_per_status: int = 1
    outcome: str = "complete"
    run_before_expiry: int = 0
    expires: Callable[[dict[str, Any]], bool] | None = None
    max_requests: int = 50_000
    max_file_bytes: int = 200 * 1024 * 1024
    #: OpenAI's enqueued-token limit per model: a batch whose prompt tokens (as the provider counts
    #: them, `usage`) would pass it, with the model's unfinished batches, fails validation
    #: with `token_limit_exceeded`.
    queue_limit_tokens: int | None = None
    #: Result lines left out of the output (the first N custom ids): partial results.
    missing_results: int = 0
    #: Results in shuffled order (the APIs promise no order).
    shuffle: bool = True
    #: Called with the new batch's id after it is stored, before its create call is answered.
    on_create: Callable[[str], None] | None = None
    #: Store the batch, then drop the connection instead of answering the create call.
    drop_create_answer: bool = False
    #: The next N create calls of Anthropic and Gemini are refused with 429 (their queue is full;
    #: nothing is created), in each API's error shape.
    refuse_creates: int = 0


class BatchHost(Protocol):
    """What Gemini's batch desk shares with the OpenAI/Anthropic one (`BatchEndpoints`)."""

    server: AnsweringServer
    plan: BatchPlan

    def note(self, request: Request) -> None:
        """Record an endpoint call for the tests."""

    def take_refusal(self) -> bool:
        """Whether the plan refuses this create call for the queue."""

    def created(self, batch_id: str, answer: Response) -> Response:
        """The create call's answer, after the plan's kill points."""
