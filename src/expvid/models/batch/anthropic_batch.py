"""Anthropic's Message Batches through the official SDK (`client.messages.batches`).

`create(requests=[{custom_id, params}])` -> a message_batch ("in_progress"); `retrieve` until
`processing_status` is "ended"; `results` streams the JSONL at `results_url`, one line per request:
`succeeded` (the Message, exactly what `/v1/messages` returns), `errored` (an error response:
invalid requests are final, API errors can be asked again), `canceled`, `expired` (asking again can
succeed). The SDK's own retries are off, as for the online backend; this client retries 429 / 5xx
and network errors itself, except on create, which is never repeated once it may have reached the
API (`BatchAPIError.uncertain`).

Message batches carry no metadata, so a batch whose creation was not recorded (the process was
killed, the answer was lost) is looked for by what the API does show (`lookup`): batches listed
newest first (`limit` up to 1000, `after_id`), created in the window since the intent was written,
with the chunk's number of requests. Those are candidates: once one has ended its results name
its custom ids, which say for certain whether it is the chunk's (`custom_ids`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from expvid.models.batch.openai_batch import NOT_SENT
from expvid.models.batch.sdk_client import SDKBatchClient
from expvid.models.batch.types import (
    CLOCK_SKEW,
    BatchHandle,
    BatchLabel,
    BatchResult,
    BatchState,
    Lookup,
    ordered_results,
)

#: How long after the intent a create call can still have made its batch (the SDK's timeout and more).
CREATE_WINDOW = timedelta(minutes=15)
LIST_PAGE = 1000
#: Error types of an `errored` result that the request itself caused (asking again cannot help).
FINAL_ERRORS = frozenset(
    {
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "request_too_large",
    }
)


class AnthropicBatchAPI(SDKBatchClient):
    provider = "anthropic"

    def __init__(self, client: Callable[[], Any], sdk: Any) -> None:
        super().__init__(client)
        self.status_error = sdk.APIStatusError
        self.transport_errors = (sdk.APIConnectionError,)

    def _status(self, error: Any) -> tuple[int, str]:
        return error.status_code, error.message

    def _not_sent(self, error: BaseException) -> bool:
        return isinstance(error.__cause__, NOT_SENT)

    async def create(self, lines_file: Path, *, input_file_id: str | None, label: BatchLabel) -> BatchHandle:
        """One create call; retried only when it certainly did not reach the API."""
        del input_file_id, label  # message batches have neither
        requests = [
            json.loads(raw) for raw in lines_file.read_text(encoding="utf-8").splitlines() if raw.strip()
        ]
        batch = await self._call(
            "create message batch",
            lambda: self._client().messages.batches.create(requests=requests),
            create=True,
        )
        return BatchHandle(provider="anthropic", batch_id=batch.id, endpoint="/v1/messages")

    async def poll(self, handle: BatchHandle) -> BatchState:
        batch = await self._call(
            f"retrieve {handle.batch_id}", lambda: self._client().messages.batches.retrieve(handle.batch_id)
        )
        return _state(batch)

    async def results(self, handle: BatchHandle, custom_ids: list[str]) -> list[BatchResult]:
        async def fetch() -> list[Any]:
            decoder = await self._client().messages.batches.results(handle.batch_id)
            return [entry async for entry in decoder]

        entries = await self._call(f"results of {handle.batch_id}", fetch)
        found = {entry.custom_id: _result(entry) for entry in entries}
        return ordered_results(
            found,
            custom_ids,
            kind="missing",
            message=f"no result for this request in batch {handle.batch_id}",
        )

    async def cancel(self, handle: BatchHandle) -> BatchState:
        batch = await self._call(
            f"cancel {handle.batch_id}", lambda: self._client().messages.batches.cancel(handle.batch_id)
        )
        return _state(batch)

    async def custom_ids(self, handle: BatchHandle) -> set[str]:
        async def fetch() -> set[str]:
            decoder = await self._client().messages.batches.results(handle.batch_id)
            return {entry.custom_id async for entry in decoder}

        return await self._call(f"results of {handle.batch_id}", fetch)

    async def listing(self, since: datetime | None = None) -> list[BatchState]:
        """The organisation's message batches created after `since`, newest first."""

        async def fetch() -> list[BatchState]:
            states: list[BatchState] = []
            async for batch in self._client().messages.batches.list(limit=LIST_PAGE):
                state = _state(batch)
                if (
                    since is not None
                    and state.created_at is not None
                    and state.created_at < since - CLOCK_SKEW
                ):
                    break
                states.append(state)
            return states

        return await self._call("list message batches", fetch)

    async def lookup(self, label: BatchLabel, *, since: datetime, n_requests: int) -> Lookup:
        """Candidates for a chunk whose creation was not recorded: created between its intent and the
        end of the create window, with its number of requests (their custom ids settle it)."""
        del label
        lookup = Lookup()
        until = since + CREATE_WINDOW + CLOCK_SKEW
        for state in await self.listing(since):
            lookup.listed += 1
            created = state.created_at
            if created is None or created > until or state.n_requests != n_requests:
                continue
            lookup.candidates.append(
                BatchHandle(provider="anthropic", batch_id=state.batch_id, endpoint="/v1/messages")
            )
        return lookup


def _state(batch: Any) -> BatchState:
    counts = getattr(batch, "request_counts", None)
    dumped = counts.model_dump() if counts is not None else {}
    return BatchState(
        batch_id=batch.id,
        status=str(batch.processing_status),
        ended=batch.processing_status == "ended",
        counts=dumped,
        created_at=getattr(batch, "created_at", None),
        n_requests=sum(int(v) for v in dumped.values() if isinstance(v, int)) if dumped else None,
    )


def _result(entry: Any) -> BatchResult:
    result = entry.result
    kind = result.type
    if kind == "succeeded":
        return BatchResult(custom_id=entry.custom_id, body=result.message.model_dump(mode="json"))
    if kind == "errored":
        inner = getattr(result.error, "error", None)
        error_type = str(getattr(inner, "type", "api_error"))
        message = str(getattr(inner, "message", "errored"))
        return BatchResult.failed(
            entry.custom_id, "http", f"{error_type}: {message}", retryable=error_type not in FINAL_ERRORS
        )
    label = "cancelled" if kind == "canceled" else str(kind)
    return BatchResult.failed(entry.custom_id, label, f"the request was {kind} before it ran")
