"""Gemini's batch mode on the loopback server, in the Gemini API's wire format (v1beta).

- `POST /{version}/models/{model}:batchGenerateContent` {batch: {displayName, inputConfig:
  {requests: {requests: [{request: GenerateContentRequest, metadata: {key}}]}}}} -> an operation
  {name: "batches/ID", metadata: {"@type": ...GenerateContentBatch, model, displayName, state:
  BATCH_STATE_PENDING, createTime, updateTime, batchStats: {requestCount, pendingRequestCount,
  ...} (int64 as strings)}, done: false};
- `GET /{version}/batches/{ID}` the operation (done, with `metadata.output.inlinedResponses` and
  `response` once it has ended); `GET /{version}/batches?pageSize&pageToken` {operations,
  nextPageToken}; `POST /{version}/batches/{ID}:cancel` ({}); `DELETE /{version}/batches/{ID}`.
- states: BATCH_STATE_PENDING -> RUNNING -> SUCCEEDED, or CANCELLED (after a cancel), EXPIRED
  (the plan's `expire`), FAILED (the plan's `fail`). Each inlined response is {response,
  metadata} or {error: {code (google.rpc), message}, metadata}, in input order.

Each request is answered through `LoopbackServer.answer_now` like an online generateContent, so a
batched answer is the online one. The plan (`BatchPlan`) is the server's one for every provider.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from expvid.fakes.models.batch_plan import BatchHost
from expvid.fakes.models.render import error_body

BATCH_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch"
OUTPUT_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput"
#: HTTP status of a failed line -> its google.rpc code.
RPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 429: 8, 500: 13, 503: 14, 504: 4}
ENDED = frozenset(
    {"BATCH_STATE_SUCCEEDED", "BATCH_STATE_FAILED", "BATCH_STATE_CANCELLED", "BATCH_STATE_EXPIRED"}
)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class GeminiBatch:
    id: str
    model: str
    display_name: str
    requests: list[dict[str, Any]]
    created: str = field(default_factory=_now)
    updated: str = field(default_factory=_now)
    state: str = "BATCH_STATE_PENDING"
    polls: int = 0
    responses: list[dict[str, Any]] = field(default_factory=list)

    def operation(self) -> dict[str, Any]:
        done = self.state in ENDED
        succeeded = sum(1 for r in self.responses if "response" in r)
        failed = sum(1 for r in self.responses if "error" in r)
        count = len(self.requests)
        stats = {
            "requestCount": str(count),
            "successfulRequestCount": str(succeeded),
            "failedRequestCount": str(failed),
            "pendingRequestCount": str(0 if done else count),
        }
        metadata: dict[str, Any] = {
            "@type": BATCH_TYPE,
            "model": self.model,
            "displayName": self.display_name,
            "createTime": self.created,
            "updateTime": self.updated,
            "batchStats": stats,
            "state": self.state,
            "name": f"batches/{self.id}",
        }
        body: dict[str, Any] = {"name": f"batches/{self.id}", "metadata": metadata, "done": done}
        if done and self.responses:
            output = {"inlinedResponses": {"inlinedResponses": self.responses}}
            metadata["output"] = output
            body["response"] = {"@type": OUTPUT_TYPE, **output}
        return body


def _error(status: int, message: str) -> Response:
    return JSONResponse(error_body("gemini", status, message), status_code=status)


class GeminiBatchEndpoints:
    def __init__(self, endpoints: BatchHost) -> None:
        self.endpoints = endpoints
        self.batches: dict[str, GeminiBatch] = {}
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self.batches.clear()

    def routes(self) -> list[Route]:
        return [
            Route("/{version}/batches", self.list, methods=["GET"]),
            Route("/{version}/batches/{batch_action}", self._route_one, methods=["GET", "POST", "DELETE"]),
        ]

    def _authorised(self, request: Request) -> bool:
        key = self.endpoints.server.api_key
        return key is None or request.headers.get("x-goog-api-key") == key

    async def create(self, request: Request, model: str) -> Response:
        """`POST .../models/{model}:batchGenerateContent` (dispatched by the loopback's model route)."""
        self.endpoints.note(request)
        if not self._authorised(request):
            return _error(401, "API key not valid. Please pass a valid API key.")
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "Invalid JSON payload received.")
        batch = body.get("batch") if isinstance(body, dict) else None
        if not isinstance(batch, dict):
            return _error(400, "batch: required field is missing")
        inline = ((batch.get("inputConfig") or {}).get("requests") or {}).get("requests")
        if not isinstance(inline, list) or not inline:
            return _error(400, "batch.input_config.requests.requests: a non-empty list is required")
        if self.endpoints.take_refusal():
            return _error(429, "loopback: too many batches in the queue (RESOURCE_EXHAUSTED)")
        for index, entry in enumerate(inline):
            if not isinstance(entry, dict) or not isinstance(entry.get("request"), dict):
                return _error(400, f"batch.input_config.requests.requests[{index}].request is required")
        stored = GeminiBatch(
            id=uuid.uuid4().hex[:24],
            model=f"models/{model}",
            display_name=str(batch.get("displayName") or ""),
            requests=inline,
        )
        with self._lock:
            self.batches[stored.id] = stored
        return self.endpoints.created(f"batches/{stored.id}", JSONResponse(stored.operation()))

    async def list(self, request: Request) -> Response:
        self.endpoints.note(request)
        if not self._authorised(request):
            return _error(401, "API key not valid. Please pass a valid API key.")
        size = int(request.query_params.get("pageSize", "50") or 50)
        start = int(request.query_params.get("pageToken") or 0)
        with self._lock:
            batches = sorted(self.batches.values(), key=lambda b: b.created, reverse=True)
            page = [b.operation() for b in batches[start : start + size]]
        answer: dict[str, Any] = {"operations": page}
        if start + size < len(batches):
            answer["nextPageToken"] = str(start + size)
        return JSONResponse(answer)

    async def _route_one(self, request: Request) -> Response:
        return await self.one(request, request.path_params["batch_action"])

    async def one(self, request: Request, batch_action: str) -> Response:
        """`GET` / `DELETE .../batches/{ID}`, `POST .../batches/{ID}:cancel`."""
        self.endpoints.note(request)
        if not self._authorised(request):
            return _error(401, "API key not valid. Please pass a valid API key.")
        batch_id, _, action = batch_action.partition(":")
        with self._lock:
            batch = self.batches.get(batch_id)
        if batch is None:
            return _error(404, f"Batch batches/{batch_id} not found.")
        if request.method == "DELETE":
            with self._lock:
                del self.batches[batch_id]
            return JSONResponse({})
        if request.method == "POST":
            if action != "cancel":
                return _error(404, f"unknown method {action!r}")
            with self._lock:
                if batch.state not in ENDED:
                    batch.state, batch.updated = "BATCH_STATE_CANCELLED", _now()
            return JSONResponse({})
        self._advance(batch)
        with self._lock:
            return JSONResponse(batch.operation())

    def _advance(self, batch: GeminiBatch) -> None:
        plan = self.endpoints.plan
        with self._lock:
            batch.polls += 1
            if batch.state in ENDED or batch.polls < plan.polls_per_status:
                return
            batch.polls = 0
            state = batch.state
        if state == "BATCH_STATE_PENDING":
            new = "BATCH_STATE_FAILED" if plan.outcome == "fail" else "BATCH_STATE_RUNNING"
            with self._lock:
                batch.state, batch.updated = new, _now()
            return
        if plan.outcome == "stall":
            return
        responses = []
        server = self.endpoints.server
        picks = plan.expires
        for index, entry in enumerate(batch.requests):
            key = (entry.get("metadata") or {}).get("key")
            request = entry["request"]
            expiring = plan.outcome == "expire" and (
                picks(request) if picks is not None else index >= plan.run_before_expiry
            )
            if expiring:
                continue  # not run before the window closed: no response
            status, body = server.answer_now(
                "gemini",
                f"/v1beta/{batch.model}:generateContent",
                request,
                via=f"batches/{batch.id}",
                model=batch.model.removeprefix("models/"),
            )
            item: dict[str, Any] = {"metadata": {"key": key}} if key is not None else {}
            if status == 200:
                item["response"] = body
            else:
                message = (body.get("error") or {}).get("message", f"error {status}")
                item["error"] = {"code": RPC_CODES.get(status, 2), "message": message}
            responses.append(item)
        with self._lock:
            drop = {r["metadata"]["key"] for r in responses if "metadata" in r}
            drop = set(sorted(drop)[: plan.missing_results])
            batch.responses = [r for r in responses if r.get("metadata", {}).get("key") not in drop]
            batch.state = "BATCH_STATE_EXPIRED" if plan.outcome == "expire" else "BATCH_STATE_SUCCEEDED"
            batch.updated = _now()
