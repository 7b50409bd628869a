"""OpenAI's Batch API over plain HTTP: upload the JSONL, create, poll, fetch output and error files.

Endpoints (API reference, "Batch" and "Files"): `POST /files` (multipart, purpose "batch"),
`POST /batches` {input_file_id, endpoint, completion_window: "24h", metadata}, `GET /batches/{id}`,
`POST /batches/{id}/cancel`, `GET /batches?limit&after`, `GET /files/{id}/content`,
`DELETE /files/{id}`. Statuses: validating, in_progress, finalizing, completed; failed (validation),
expired, cancelling, cancelled.

Output-file lines carry `response: {status_code, body}`; error-file lines carry either an error
status's body or `error: {code, message}` for requests never run (`batch_expired`,
`batch_cancelled`). Each becomes a `BatchResult`; requests absent from both files are reported as
"missing" (retryable), so nothing is silently dropped. A 400 that names a parameter the model does
not take is "parameter" (retryable): asked online, the backend learns the fix from it.

The batch's `metadata` names the run and the chunk, so a process that died between creating a
batch and recording it finds it again (`find`) instead of paying for it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

from expvid.models.batch.types import BatchHandle, BatchResult, BatchState, RequestError
from expvid.models.param_fallback import unsupported_from_error
from expvid.models.retry import backoff_delay, failure_for_status

TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
#: Error codes of requests that were never run: asking again can succeed.
NOT_RUN = {"batch_expired": "expired", "batch_cancelled": "cancelled"}
HTTP_RETRIES = 5


class BatchAPIError(RuntimeError):
    """A batch endpoint call that failed for good (after retries for 429 / 5xx / network errors)."""


class OpenAIBatchAPI:
    provider = "openai"

    def __init__(self, client: Callable[[], httpx2.AsyncClient], *, endpoint: str) -> None:
        self._client = client
        #: The path every line's `url` names and the batch is created for ("/v1/chat/completions").
        self.endpoint = endpoint
        self._rng = random.Random()

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        for attempt in range(HTTP_RETRIES + 1):
            try:
                response = await self._client().request(method, path, **kwargs)
            except httpx2.TransportError as error:
                if attempt == HTTP_RETRIES:
                    raise BatchAPIError(f"{method} {path}: {type(error).__name__}: {error}") from None
                await asyncio.sleep(backoff_delay(attempt, base_s=1.0, max_s=30.0, rng=self._rng))
                continue
            if response.status_code < 400:
                return response
            failure = failure_for_status(response.status_code, response.headers, response.text)
            if not failure.retryable or attempt == HTTP_RETRIES:
                raise BatchAPIError(f"{method} {path}: {failure.message}")
            delay = failure.retry_after_s
            if delay is None:
                delay = backoff_delay(attempt, base_s=1.0, max_s=30.0, rng=self._rng)
            await asyncio.sleep(min(delay, 60.0))
        raise AssertionError("unreachable")

    async def submit(self, lines_file: Path, *, metadata: dict[str, str]) -> BatchHandle:
        with lines_file.open("rb") as handle:
            uploaded = await self._call(
                "POST",
                "/files",
                files={"file": (lines_file.name, handle, "application/jsonl")},
                data={"purpose": "batch"},
            )
        file_id = uploaded.json()["id"]
        created = await self._call(
            "POST",
            "/batches",
            json={
                "input_file_id": file_id,
                "endpoint": self.endpoint,
                "completion_window": "24h",
                "metadata": metadata,
            },
        )
        batch = created.json()
        return BatchHandle(
            provider="openai", batch_id=batch["id"], input_file_id=file_id, endpoint=self.endpoint
        )

    async def poll(self, handle: BatchHandle) -> BatchState:
        batch = (await self._call("GET", f"/batches/{handle.batch_id}")).json()
        return _state(batch)

    async def results(self, handle: BatchHandle, custom_ids: list[str]) -> list[BatchResult]:
        batch = (await self._call("GET", f"/batches/{handle.batch_id}")).json()
        state = _state(batch)
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
        missing = RequestError(
            kind="batch_failed" if batch.get("status") == "failed" else "missing",
            message=state.failure
            or f"no result for this request in batch {handle.batch_id} ({batch.get('status')})",
        )
        return [
            found.get(custom_id) or BatchResult(custom_id=custom_id, error=missing)
            for custom_id in custom_ids
        ]

    async def cancel(self, handle: BatchHandle) -> BatchState:
        return _state((await self._call("POST", f"/batches/{handle.batch_id}/cancel")).json())

    async def find(self, metadata: dict[str, str], pages: int = 5) -> BatchHandle | None:
        """A batch created with exactly this metadata (a chunk whose record was not written)."""
        after: str | None = None
        for _ in range(pages):
            params: dict[str, Any] = {"limit": 100}
            if after:
                params["after"] = after
            listing = (await self._call("GET", "/batches", params=params)).json()
            for batch in listing.get("data") or []:
                found = batch.get("metadata") or {}
                if all(found.get(key) == value for key, value in metadata.items()):
                    return BatchHandle(
                        provider="openai",
                        batch_id=batch["id"],
                        input_file_id=batch.get("input_file_id"),
                        endpoint=batch.get("endpoint"),
                    )
            if not listing.get("has_more"):
                return None
            after = listing.get("last_id")
        return None

    async def cleanup(self, handle: BatchHandle) -> None:
        """Delete the uploaded input file (it holds every frame sent); failures are not fatal."""
        if handle.input_file_id:
            with contextlib.suppress(BatchAPIError):
                await self._call("DELETE", f"/files/{handle.input_file_id}")


def _state(batch: dict[str, Any]) -> BatchState:
    status = str(batch.get("status"))
    failure = None
    errors = (batch.get("errors") or {}).get("data") or []
    if status == "failed":
        shown = "; ".join(
            f"line {e.get('line')}: {e.get('code')}: {e.get('message')}"
            if e.get("line")
            else f"{e.get('code')}: {e.get('message')}"
            for e in errors[:3]
        )
        failure = f"batch {batch.get('id')} failed validation" + (f": {shown}" if shown else "")
    counts = batch.get("request_counts") or {}
    return BatchState(
        batch_id=str(batch.get("id")),
        status=status,
        ended=status in TERMINAL,
        counts={key: int(value) for key, value in counts.items() if isinstance(value, int)},
        failure=failure,
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
        return BatchResult(
            custom_id=custom_id,
            error=RequestError(
                kind=kind, message=f"HTTP {status}: {detail[:300]}", status=status, retryable=retryable
            ),
        )
    code = str((error or {}).get("code") or "error")
    message = str((error or {}).get("message") or "no response")
    kind = NOT_RUN.get(code, "other")
    return BatchResult(
        custom_id=custom_id, error=RequestError(kind=kind, message=f"{code}: {message}", retryable=True)
    )
