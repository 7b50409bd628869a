"""Gemini batch mode through the official `google-genai` SDK (`client.aio.batches`).

Wire (Gemini API reference, "Batch mode"): `POST /v1beta/models/{model}:batchGenerateContent`
{batch: {displayName, inputConfig: {requests: {requests: [{request: GenerateContentRequest,
metadata: {key}}]}}}} answers a long-running operation {name: "batches/...", metadata: the
GenerateContentBatch (state BATCH_STATE_PENDING / RUNNING / SUCCEEDED / FAILED / CANCELLED /
EXPIRED, createTime, batchStats, output once done)}; `GET /v1beta/batches/{id}`;
`GET /v1beta/batches?pageSize&pageToken` ({operations, nextPageToken});
`POST /v1beta/batches/{id}:cancel`; `DELETE /v1beta/batches/{id}`. Results of inlined requests come
back in `output.inlinedResponses.inlinedResponses`, in input order, each {response, metadata} or
{error: {code, message}} (a google.rpc status code).

Each request is sent inline (an `InlinedRequest`: contents, config, and metadata {"key":
custom_id}), composed by the online backend's own payload code, so a batched request is the online
one. The batch's display name carries the run, the chunk and the attempt (`BatchLabel`), so a
batch whose creation was not recorded is found again by listing (`lookup`). The SDK's retries are
off; reads are retried here, a create only when it certainly did not reach the API.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

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
from expvid.models.gemini_backend import transport_errors

ENDED = frozenset({"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"})
#: google.rpc codes of a request that asking again cannot fix (INVALID_ARGUMENT, NOT_FOUND,
#: PERMISSION_DENIED, FAILED_PRECONDITION, UNAUTHENTICATED).
FINAL_CODES = frozenset({3, 5, 7, 9, 16})
#: Transport failures before anything is sent (by class name: the SDK may send with httpx,
#: httpx2 or aiohttp).
_NOT_SENT_NAMES = frozenset({"ConnectError", "ConnectTimeout", "PoolTimeout", "ClientConnectorError"})


class GeminiBatchAPI(SDKBatchClient):
    provider = "gemini"

    def __init__(self, client: Callable[[], Any], *, model: str, types: Any, errors: Any) -> None:
        super().__init__(client)
        self.model = model
        self._types = types
        self.status_error = errors.APIError
        timeouts, network = transport_errors()
        self.transport_errors = (*timeouts, *network)

    def _status(self, error: Any) -> tuple[int, str]:
        return int(error.code or 0), str(error.message)

    def _not_sent(self, error: BaseException) -> bool:
        return type(error).__name__ in _NOT_SENT_NAMES

    def inlined(self, lines_file: Path) -> list[Any]:
        return [
            self._types.InlinedRequest.model_validate(json.loads(raw))
            for raw in lines_file.read_text(encoding="utf-8").splitlines()
            if raw.strip()
        ]

    async def create(self, lines_file: Path, *, input_file_id: str | None, label: BatchLabel) -> BatchHandle:
        del input_file_id
        requests = self.inlined(lines_file)
        config = {"display_name": label.display_name()}
        job = await self._call(
            "create batch",
            lambda: self._client().aio.batches.create(model=self.model, src=requests, config=config),
            create=True,
        )
        return BatchHandle(provider="gemini", batch_id=str(job.name), endpoint="batchGenerateContent")

    async def _get(self, handle: BatchHandle) -> Any:
        return await self._call(
            f"get {handle.batch_id}", lambda: self._client().aio.batches.get(name=handle.batch_id)
        )

    async def poll(self, handle: BatchHandle) -> BatchState:
        return _state(await self._get(handle))

    async def results(self, handle: BatchHandle, custom_ids: list[str]) -> list[BatchResult]:
        job = await self._get(handle)
        state = _state(job)
        found = _inlined_results(job)
        kind = {"JOB_STATE_CANCELLED": "cancelled", "JOB_STATE_EXPIRED": "expired"}.get(
            state.status, "missing"
        )
        return ordered_results(
            found,
            custom_ids,
            kind="batch_failed" if state.status == "JOB_STATE_FAILED" else kind,
            message=state.failure
            or f"no result for this request in batch {handle.batch_id} ({state.status})",
        )

    async def custom_ids(self, handle: BatchHandle) -> set[str]:
        return set(_inlined_results(await self._get(handle)))

    async def cancel(self, handle: BatchHandle) -> BatchState:
        await self._call(
            f"cancel {handle.batch_id}", lambda: self._client().aio.batches.cancel(name=handle.batch_id)
        )
        return await self.poll(handle)

    async def listing(self, since: datetime | None = None) -> list[BatchState]:
        async def fetch() -> list[Any]:
            pager = await self._client().aio.batches.list(config={"page_size": 100})
            return [job async for job in pager]

        states = [_state(job) for job in await self._call("list batches", fetch)]
        if since is None:
            return states
        cutoff = since - CLOCK_SKEW
        return [s for s in states if s.created_at is None or s.created_at >= cutoff]

    async def lookup(self, label: BatchLabel, *, since: datetime, n_requests: int) -> Lookup:
        """The batches whose display name is `label`'s (every page: the order is not documented)."""
        del n_requests

        async def fetch() -> list[Any]:
            pager = await self._client().aio.batches.list(config={"page_size": 100})
            return [job async for job in pager]

        name = label.display_name()
        lookup = Lookup()
        for job in await self._call("list batches", fetch):
            lookup.listed += 1
            if job.display_name == name:
                lookup.found.append(
                    BatchHandle(provider="gemini", batch_id=str(job.name), endpoint="batchGenerateContent")
                )
        return lookup


def _state(job: Any) -> BatchState:
    state = getattr(job, "state", None)
    status = str(getattr(state, "value", state) or "JOB_STATE_UNSPECIFIED")
    error = getattr(job, "error", None)
    failure = None
    if status == "JOB_STATE_FAILED":
        failure = f"batch {job.name} failed" + (
            f": {error.message}" if error is not None and error.message else ""
        )
    return BatchState(
        batch_id=str(job.name),
        status=status,
        ended=status in ENDED,
        failure=failure,
        created_at=getattr(job, "create_time", None),
    )


def _inlined_results(job: Any) -> dict[str, BatchResult]:
    dest = getattr(job, "dest", None)
    found: dict[str, BatchResult] = {}
    for entry in getattr(dest, "inlined_responses", None) or []:
        custom_id = (entry.metadata or {}).get("key")
        if custom_id is None:
            continue
        if entry.response is not None:
            found[custom_id] = BatchResult(
                custom_id=custom_id, body=entry.response.model_dump(mode="json", exclude_none=True)
            )
            continue
        error = entry.error
        code = int(getattr(error, "code", 0) or 0)
        message = str(getattr(error, "message", None) or "no response")
        found[custom_id] = BatchResult.failed(
            custom_id, "http", f"code {code}: {message}", retryable=code not in FINAL_CODES
        )
    return found
