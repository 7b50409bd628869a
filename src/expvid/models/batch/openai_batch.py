"""OpenAI's Batch API over plain HTTP: upload the JSONL, create, poll, fetch output and error files.

Endpoints (API reference, "Batch" and "Files"): `POST /files` (multipart, purpose "batch"),
`POST /batches` {input_file_id, endpoint, completion_window: "24h", metadata}, `GET /batches/{id}`,
`POST /batches/{id}/cancel`, `GET /batches?limit&after` (newest first; `limit` 1-100, default
20; `after` the last id of the previous page; `has_more`), `GET /files/{id}/content`,
`DELETE /files/{id}`. Statuses: validating, in_progress, finalizing, completed; failed
(validation), expired, cancelling, cancelled.

Output-file lines carry `response: {status_code, body}`; error-file lines carry either an error
status's body or `error: {code, message}` for requests never run (`batch_expired`,
`batch_cancelled`). Each becomes a `BatchResult`; requests absent from both files are reported as
"missing" (retryable), so nothing is silently dropped. A 400 that names a parameter the model does
not take is "parameter" (retryable): asked online, the backend learns the fix from it.

A batch refused for the organisation's queue limit fails validation with `errors.data[0]` =
{code: "token_limit_exceeded", line: null, message: "Enqueued token limit reached for MODEL in
organization ORG. Limit: 2,000,000 enqueued tokens. Please try again once some in_progress batches
have been completed."}: nothing ran, and the state says so (`queue_refusal`, with the limit).

Creating a batch is never retried blindly: the upload is recorded before the batch is created,
the batch's `metadata` names the run, the chunk and the attempt, and a create whose answer was lost
(the connection broke after the request went out, a 5xx, a timeout) is reported `uncertain`, so
the caller looks the batch up (`lookup`, listing back to when the create was attempted, however
many pages that takes) before sending anything again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2

from expvid.models.batch.types import (
    CLOCK_SKEW,
    HTTP_RETRIES,
    BatchAPIError,
    BatchHandle,
    BatchLabel,
    BatchResult,
    BatchState,
    Lookup,
    create_failure,
    ordered_results,
    retry_pause,
)
from expvid.models.param_fallback import unsupported_from_error
from expvid.models.retry import failure_for_status

__all__ = ["HTTP_RETRIES", "BatchAPIError", "OpenAIBatchAPI"]

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: Error codes of requests that were never run: asking again can succeed.
NOT_RUN = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
#: The most batches one page of `GET /batches` returns.
LIST_PAGE = 100
QUEUE_REFUSAL = "token_limit_exceeded"
#: Transport failures that happen before a request is sent: repeating it cannot create a duplicate.
NOT_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)
_LIMIT = re.compile(r"Limit:\s*([\d,]+)\s*enqueued tokens", re.IGNORECASE)


class OpenAIBatchAPI:
    provider = "openai"

    def __init__(self, client: Callable[[], httpx2.AsyncClient], *, endpoint: str) -> None:
        self._client = client
        #: The path every line's `url` names and the batch is created for ("/v1/chat/completions").
        self.endpoint = endpoint
        self._rng = random.Random()

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        """A call that is safe to repeat (reads, cancels, uploads): retried on 429 / 5xx / network."""
        for attempt in range(HTTP_RETRIES + 1):
            try:
                response = await self._client().request(method, path, **kwargs)
            except httpx2.TransportError as error:
                if attempt == HTTP_RETRIES:
                    raise BatchAPIError(f"{method} {path}: {type(error).__name__}: {error}") from None
                await asyncio.sleep(retry_pause(attempt, self._rng))
                continue
            if response.status_code < 400:
                return response
            failure = failure_for_status(response.status_code, response.headers, response.text)
            if not failure.retryable or attempt == HTTP_RETRIES:
                raise BatchAPIError(f"{method} {path}: {failure.message}")
            delay = failure.retry_after_s
            if delay is None:
                delay = retry_pause(attempt, self._rng)
            await asyncio.sleep(min(delay, 60.0))
        raise AssertionError("unreachable")

    async def upload(self, lines_file: Path) -> str | None:
        """Upload the JSONL (an orphan file costs nothing and is found by no one: safe to repeat)."""
        with lines_file.open("rb") as handle:
            uploaded = await self._call(
                "POST",
                "/files",
                files={"file": (lines_file.name, handle, "application/jsonl")},
                data={"purpose": "batch"},
            )
        return str(uploaded.json()["id"])

    async def create(self, lines_file: Path, *, input_file_id: str | None, label: BatchLabel) -> BatchHandle:
        """One `POST /batches`, retried only when it certainly did not reach the provider."""
        if input_file_id is None:
            raise BatchAPIError("create: the input file was not uploaded")
        body = {
            "input_file_id": input_file_id,
            "endpoint": self.endpoint,
            "completion_window": "24h",
            "metadata": label.metadata(),
        }
        for attempt in range(HTTP_RETRIES + 1):
            try:
                response = await self._client().post("/batches", json=body)
            except NOT_SENT as error:  # never sent: safe to try again
                if attempt == HTTP_RETRIES:
                    raise BatchAPIError(f"POST /batches: {type(error).__name__}: {error}") from None
                await asyncio.sleep(retry_pause(attempt, self._rng))
                continue
            except httpx2.TransportError as error:  # sent; the answer was lost
                raise BatchAPIError(
                    f"POST /batches: {type(error).__name__}: {error}", uncertain=True
                ) from None
            if response.status_code < 400:
                batch = response.json()
                return BatchHandle(
                    provider="openai",
                    batch_id=batch["id"],
                    input_file_id=input_file_id,
                    endpoint=self.endpoint,
                )
            failure = failure_for_status(response.status_code, response.headers, response.text)
            detail = failure.message.removeprefix(f"HTTP {response.status_code}: ")
            refused = create_failure(
                "POST /batches", response.status_code, detail, last=attempt == HTTP_RETRIES
            )
            if refused is not None:
                raise refused
            await asyncio.sleep(min(failure.retry_after_s or retry_pause(attempt), 60.0))
        raise AssertionError("unreachable")

    async def poll(self, handle: BatchHandle) -> BatchState:
        batch = (await self._call("GET", f"/batches/{handle.batch_id}")).json()
        return _state(batch)

    async def results(self, handle: BatchHandle, custom_ids: list[str]) -> list[BatchResult]:
        batch = (await self._call("GET", f"/batches/{handle.batch_id}")).json()
        state = _state(batch)
        found = await self._result_lines(batch)
        return ordered_results(
            found,
            custom_ids,
            kind="batch_failed" if batch.get("status") == "failed" else "missing",
            message=state.failure
            or f"no result for this request in batch {handle.batch_id} ({batch.get('status')})",
        )

    async def _result_lines(self, batch: dict[str, Any]) -> dict[str, BatchResult]:
        found: dict[str, BatchResult] = {}
        for key in ("output_file_id", "error_file_id"):
            file_id = batch.get(key)
            if not file_id:
                continue
            content = (await self._call("GET", f"/files/{file_id}/content")).content
            for raw in content.decode("utf-8").splitlines():
                if raw.strip():
                    result = _result(json.loads(raw))
                    found[result.custom_id] = result
        return found

    async def custom_ids(self, handle: BatchHandle) -> set[str]:
        batch = (await self._call("GET", f"/batches/{handle.batch_id}")).json()
        return set(await self._result_lines(batch))

    async def cancel(self, handle: BatchHandle) -> BatchState:
        return _state((await self._call("POST", f"/batches/{handle.batch_id}/cancel")).json())

    async def listing(self, since: datetime | None = None) -> list[BatchState]:
        """Every batch of the organisation created after `since` (newest first), page by page."""
        states: list[BatchState] = []
        async for batch in self._pages(since):
            states.append(_state(batch))
        return states

    async def _pages(self, since: datetime | None) -> Any:
        after: str | None = None
        cutoff = None if since is None else (since - CLOCK_SKEW).timestamp()
        while True:
            params: dict[str, Any] = {"limit": LIST_PAGE}
            if after:
                params["after"] = after
            listing = (await self._call("GET", "/batches", params=params)).json()
            data = listing.get("data") or []
            for batch in data:
                if cutoff is not None and int(batch.get("created_at") or 0) < cutoff:
                    return  # newest first: everything further back is older than the intent
                yield batch
            if not listing.get("has_more") or not data:
                return
            after = listing.get("last_id") or data[-1].get("id")

    async def lookup(self, label: BatchLabel, *, since: datetime, n_requests: int) -> Lookup:
        """The batches created with `label`'s metadata, listing back to `since` however far that is."""
        del n_requests  # the metadata is exact
        wanted = label.metadata()
        lookup = Lookup()
        async for batch in self._pages(since):
            lookup.listed += 1
            found = batch.get("metadata") or {}
            if all(found.get(key) == value for key, value in wanted.items()):
                lookup.found.append(
                    BatchHandle(
                        provider="openai",
                        batch_id=batch["id"],
                        input_file_id=batch.get("input_file_id"),
                        endpoint=batch.get("endpoint"),
                    )
                )
        return lookup

    async def cleanup(self, handle: BatchHandle) -> None:
        """Delete the uploaded input file (it holds every frame sent); failures are not fatal."""
        if handle.input_file_id:
            with contextlib.suppress(BatchAPIError):
                await self._call("DELETE", f"/files/{handle.input_file_id}")


def _state(batch: dict[str, Any]) -> BatchState:
    status = str(batch.get("status"))
    failure = None
    refusal = None
    limit = None
    errors = (batch.get("errors") or {}).get("data") or []
    if status == "failed":
        queue = [e for e in errors if e.get("code") == QUEUE_REFUSAL]
        if queue:
            refusal = str(queue[0].get("message") or QUEUE_REFUSAL)
            match = _LIMIT.search(refusal)
            limit = int(match.group(1).replace(",", "")) if match else None
        shown = "; ".join(
            f"line {e.get('line')}: {e.get('code')}: {e.get('message')}"
            if e.get("line")
            else f"{e.get('code')}: {e.get('message')}"
            for e in errors[:3]
        )
        failure = f"batch {batch.get('id')} failed validation" + (f": {shown}" if shown else "")
    counts = batch.get("request_counts") or {}
    created = batch.get("created_at")
    total = counts.get("total")
    return BatchState(
        batch_id=str(batch.get("id")),
        status=status,
        ended=status in TERMINAL,
        counts={key: int(value) for key, value in counts.items() if isinstance(value, int)},
        failure=failure,
        queue_refusal=refusal,
        queue_limit_tokens=limit,
        created_at=datetime.fromtimestamp(created, UTC) if isinstance(created, int | float) else None,
        n_requests=total if isinstance(total, int) else None,
    )


def _result(line: dict[str, Any]) -> BatchResult:
    custom_id = str(line.get("custom_id"))
    response = line.get("response")
    error = line.get("error")
    if (
        isinstance(response, dict)
        and response.get("status_code") == 200
        and isinstance(response.get("body"), dict)
    ):
        return BatchResult(custom_id=custom_id, body=response["body"])
    if isinstance(response, dict):
        status = response.get("status_code")
        body = response.get("body")
        detail = json.dumps(body) if body is not None else ""
        retryable = isinstance(status, int) and (status >= 500 or status in (408, 409, 429))
        kind = "http"
        if status == 400 and unsupported_from_error(detail) is not None:
            # A parameter this model does not take: asked online, the backend learns the fix from
            # the same 400 (`param_fallback`) and the request goes out right.
            kind, retryable = "parameter", True
        return BatchResult.failed(
            custom_id, kind, f"HTTP {status}: {detail[:300]}", status=status, retryable=retryable
        )
    code = str((error or {}).get("code") or "error")
    message = str((error or {}).get("message") or "no response")
    return BatchResult.failed(custom_id, NOT_RUN.get(code, "other"), f"{code}: {message}")
