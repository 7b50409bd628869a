"""Anthropic's Message Batches through the official SDK (`client.messages.batches`).

`create(requests=[{custom_id, params}])` -> a message_batch ("in_progress"); `retrieve` until
`processing_status` is "ended"; `results` streams the JSONL at `results_url`, one line per request:
`succeeded` (the Message, exactly what `/v1/messages` returns), `errored` (an error response:
invalid requests are final, API errors can be asked again), `canceled`, `expired` (asking again can
succeed). The SDK's own retries are off, as for the online backend; this client retries 429 / 5xx
and network errors itself. Message batches carry no metadata, so a batch created by a process that
died before recording it cannot be found again (`find` returns None; the chunk is resubmitted).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from expvid.models.batch.openai_batch import HTTP_RETRIES, BatchAPIError
from expvid.models.batch.types import BatchHandle, BatchResult, BatchState, RequestError
from expvid.models.retry import backoff_delay

T = TypeVar("T")
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


class AnthropicBatchAPI:
    provider = "anthropic"

    def __init__(self, client: Callable[[], Any], sdk: Any) -> None:
        self._client = client
        self._sdk = sdk
        self._rng = random.Random()

    async def _call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        sdk = self._sdk
        for attempt in range(HTTP_RETRIES + 1):
            try:
                return await make()
            except sdk.APIStatusError as error:
                status = error.status_code
                if not (status >= 500 or status in (408, 409, 429)) or attempt == HTTP_RETRIES:
                    raise BatchAPIError(f"{what}: HTTP {status}: {error.message}") from None
            except sdk.APIConnectionError as error:
                if attempt == HTTP_RETRIES:
                    raise BatchAPIError(f"{what}: {type(error).__name__}: {error}") from None
            await asyncio.sleep(backoff_delay(attempt, base_s=1.0, max_s=30.0, rng=self._rng))
        raise AssertionError("unreachable")

    async def submit(self, lines_file: Path, *, metadata: dict[str, str]) -> BatchHandle:
        del metadata  # message batches have none
        requests = [
            json.loads(raw) for raw in lines_file.read_text(encoding="utf-8").splitlines() if raw.strip()
        ]
        batch = await self._call(
            "create message batch", lambda: self._client().messages.batches.create(requests=requests)
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
        missing = RequestError(
            kind="missing", message=f"no result for this request in batch {handle.batch_id}"
        )
        return [
            found.get(custom_id) or BatchResult(custom_id=custom_id, error=missing)
            for custom_id in custom_ids
        ]

    async def cancel(self, handle: BatchHandle) -> BatchState:
        batch = await self._call(
            f"cancel {handle.batch_id}", lambda: self._client().messages.batches.cancel(handle.batch_id)
        )
        return _state(batch)

    async def find(self, metadata: dict[str, str]) -> BatchHandle | None:
        del metadata
        return None

    async def cleanup(self, handle: BatchHandle) -> None:
        return None


def _state(batch: Any) -> BatchState:
    counts = getattr(batch, "request_counts", None)
    return BatchState(
        batch_id=batch.id,
        status=str(batch.processing_status),
        ended=batch.processing_status == "ended",
        counts=counts.model_dump() if counts is not None else {},
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
        return BatchResult(
            custom_id=entry.custom_id,
            error=RequestError(
                kind="http", message=f"{error_type}: {message}", retryable=error_type not in FINAL_ERRORS
            ),
        )
    label = "cancelled" if kind == "canceled" else str(kind)
    return BatchResult(
        custom_id=entry.custom_id,
        error=RequestError(kind=label, message=f"the request was {kind} before it ran", retryable=True),
    )
