"""The providers' batch endpoints on the loopback server: OpenAI Files + Batch API, Anthropic Message Batches.

Shapes and status transitions as the API references give them:

OpenAI (`/v1/files`, `/v1/batches`):
- `POST /v1/files` (multipart `file`, `purpose=batch`) -> a File object (`file-...`, bytes, purpose);
  `GET /v1/files/{id}`, `GET /v1/files/{id}/content` (the bytes), `DELETE /v1/files/{id}`.
- `POST /v1/batches` {input_file_id, endpoint, completion_window: "24h", metadata} -> a Batch object
  (`batch_...`, status "validating"); `GET /v1/batches/{id}`; `POST /v1/batches/{id}/cancel`;
  `GET /v1/batches?limit=&after=` (newest first, `has_more`).
- status: validating -> in_progress -> finalizing -> completed, or validating -> failed (`errors.data`
  with code, message and line: bad JSON, duplicate custom_id, a url other than the batch's
  endpoint, too many requests), in_progress -> expired (what was not run goes to the error file
  with code `batch_expired`), cancelling -> cancelled. `request_counts` {total, completed, failed}.
- input lines {custom_id, method: "POST", url, body}; output lines {id, custom_id, response:
  {status_code: 200, request_id, body}, error: null}; error-file lines for requests answered with
  an error status ({..., response: {status_code: 4xx/5xx, body: {error}}, error: null}) or never run
  ({..., response: null, error: {code, message}}).

Anthropic (`/v1/messages/batches`):
- `POST` {requests: [{custom_id (^[a-zA-Z0-9_-]{1,64}$, unique), params}]} -> a message_batch
  (`msgbatch_...`, processing_status "in_progress", request_counts {processing, succeeded, errored,
  canceled, expired}); `GET .../{id}`; `POST .../{id}/cancel` (-> "canceling"); `GET .../{id}/results`
  (JSONL once ended: {custom_id, result: {type: succeeded, message} | {type: errored, error:
  {type: "error", error: {type, message}}} | {type: canceled} | {type: expired}}); `GET` lists.

Lists page as the APIs do: OpenAI `GET /v1/batches?limit=1..100&after=ID` (a limit outside
1-100 is a 400), newest first, `has_more`, `first_id`, `last_id`; Anthropic
`GET /v1/messages/batches?limit=1..1000&after_id=ID|before_id=ID`, newest first, `has_more`.
Gemini's batch mode is served by `gemini_batch`.

Every line is answered through `LoopbackServer.answer_now`: the same shape checks, provider rules
and responder as an online request, so a batched answer is exactly the online answer. How a batch
proceeds is set by `BatchPlan` (the default completes every batch after a few polls, its results
in shuffled order as the APIs allow). The plan can also make the loopback misbehave the ways the
providers do: a queue limit (OpenAI's `token_limit_exceeded`), results missing from the files,
and kill points inside creation (`on_create` runs after a batch is stored and before the answer
is sent: a test kills the client process there; `drop_create_answer` stores the batch and then
drops the connection).
"""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from expvid.fakes.models.batch_plan import AnsweringServer, BatchPlan
from expvid.fakes.models.gemini_batch import GeminiBatchEndpoints
from expvid.fakes.models.render import DroppedResponse, error_body
from expvid.fakes.models.request_shapes import (
    RecordedRequest,
    RequestShapeError,
    parse_openai,
    parse_responses,
)
from expvid.fakes.models.usage import provider_prompt_tokens

T = TypeVar("T")
#: Creation order of every batch (ties of `created_at`, a second's resolution, listed newest first).
_ORDER: Iterator[int] = itertools.count()
OPENAI_ENDPOINTS = {"/v1/chat/completions": "openai", "/v1/responses": "openai-responses"}
ANTHROPIC_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."
CANCELLED_MESSAGE = "This request was not executed because the batch was cancelled."


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int

    def obj(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
            "expires_at": None,
        }


@dataclass
class OpenAIBatch:
    id: str
    endpoint: str
    input_file_id: str
    completion_window: str
    metadata: dict[str, str] | None
    created_at: int
    status: str = "validating"
    polls: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)
    output: list[dict[str, Any]] = field(default_factory=list)
    error_lines: list[dict[str, Any]] = field(default_factory=list)
    output_file_id: str | None = None
    error_file_id: str | None = None
    stamps: dict[str, int] = field(default_factory=dict)
    #: The model of its lines (the queue limit is per model) and its prompt tokens once validated.
    model: str = ""
    prompt_tokens: int = 0
    T = TypeVar("T")
    #: Creation order (ties of `created_at`, a second's resolution, are listed newest first).
    order: int = field(default_factory=lambda: next(_ORDER))

    def obj(self) -> dict[str, Any]:
        completed = sum(1 for line in self.output)
        failed = len(self.error_lines)
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": {"object": "list", "data": self.errors} if self.errors else None,
            "input_file_id": self.input_file_id,
            "completion_window": self.completion_window,
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_at,
            "in_progress_at": self.stamps.get("in_progress"),
            "expires_at": self.created_at + 24 * 3600,
            "finalizing_at": self.stamps.get("finalizing"),
            "completed_at": self.stamps.get("completed"),
            "failed_at": self.stamps.get("failed"),
            "expired_at": self.stamps.get("expired"),
            "cancelling_at": self.stamps.get("cancelling"),
            "cancelled_at": self.stamps.get("cancelled"),
            "request_counts": {"total": len(self.lines), "completed": completed, "failed": failed},
            "metadata": self.metadata,
        }


@dataclass
class MessageBatch:
    id: str
    requests: list[dict[str, Any]]
    created_at: datetime
    processing_status: str = "in_progress"
    polls: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    order: int = field(default_factory=lambda: next(_ORDER))
    #: Another user's batch (`seed_anthropic`): it runs on its own, answered as expired.
    foreign: bool = False

    def obj(self, base_url: str) -> dict[str, Any]:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if self.processing_status != "ended":
            counts["processing"] = len(self.requests)
        for result in self.results:
            counts[result["result"]["type"]] += 1
        ended = self.processing_status == "ended"
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.processing_status,
            "request_counts": counts,
            "ended_at": _iso(self.ended_at),
            "created_at": _iso(self.created_at),
            "expires_at": _iso(datetime.fromtimestamp(self.created_at.timestamp() + 24 * 3600, UTC)),
            "archived_at": None,
            "cancel_initiated_at": _iso(self.cancel_initiated_at),
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if ended else None,
        }


QUEUE_STATUSES = frozenset({"validating", "in_progress", "finalizing", "cancelling"})


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def _gemini_client(request: Request) -> bool:
    """A request of Google's SDK (its API key header): Gemini's batch paths are OpenAI's on one port."""
    return "x-goog-api-key" in request.headers


def _openai_error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> Response:
    kind = "invalid_request_error" if status < 500 else "server_error"
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


def _anthropic_error(status: int, message: str) -> Response:
    return JSONResponse(error_body("anthropic", status, message), status_code=status)


def _no_file(file_id: str) -> Response:
    return _openai_error(404, f"No such File object: {file_id}", param="id")


def _no_openai_batch(batch_id: str) -> Response:
    return _openai_error(404, f"No batch found with id '{batch_id}'.", param="batch_id")


def _no_message_batch(batch_id: str) -> Response:
    return _anthropic_error(404, f"message batch {batch_id} not found")


class BatchEndpoints:
    """In-memory files and batches, answered in the providers' shapes (thread-safe)."""

    def __init__(self, server: AnsweringServer) -> None:
        self.server = server
        self.plan = BatchPlan()
        self._lock = threading.Lock()
        self.files: dict[str, StoredFile] = {}
        self.openai: dict[str, OpenAIBatch] = {}
        self.anthropic: dict[str, MessageBatch] = {}
        #: Every batch endpoint call as (method, path), for tests to check what a client did.
        self.calls: list[tuple[str, str]] = []
        self.gemini = GeminiBatchEndpoints(self)

    def clear(self) -> None:
        with self._lock:
            self.plan = BatchPlan()
            self.files.clear()
            self.openai.clear()
            self.anthropic.clear()
            self.calls.clear()
        self.gemini.clear()

    def routes(self) -> list[Route]:
        return [
            Route("/v1/files", self._upload, methods=["POST"]),
            Route(
                "/v1/files/{file_id}",
                self._by_id(self.files, _no_file, self._file),
                methods=["GET", "DELETE"],
            ),
            Route(
                "/v1/files/{file_id}/content",
                self._by_id(self.files, _no_file, self._file_content),
                methods=["GET"],
            ),
            Route("/v1/batches", self._openai_batches, methods=["POST", "GET"]),
            Route("/v1/batches/{batch_id}", self._openai_retrieve, methods=["GET"]),
            Route(
                "/v1/batches/{batch_id}/cancel",
                self._by_id(self.openai, _no_openai_batch, self._openai_cancel),
                methods=["POST"],
            ),
            Route("/v1/messages/batches", self._anthropic_batches, methods=["POST", "GET"]),
            Route(
                "/v1/messages/batches/{batch_id}",
                self._by_id(self.anthropic, _no_message_batch, self._anthropic_retrieve),
                methods=["GET"],
            ),
            Route(
                "/v1/messages/batches/{batch_id}/cancel",
                self._by_id(self.anthropic, _no_message_batch, self._anthropic_cancel),
                methods=["POST"],
            ),
            Route(
                "/v1/messages/batches/{batch_id}/results",
                self._by_id(self.anthropic, _no_message_batch, self._anthropic_results),
                methods=["GET"],
            ),
            *self.gemini.routes(),
        ]

    def note(self, request: Request) -> None:
        with self._lock:
            self.calls.append((request.method, request.url.path))

    def _lookup(
        self, request: Request, table: Mapping[str, T], not_found: Callable[[str], Response]
    ) -> T | Response:
        """Note the call; then the object that the path's id names in `table`, or the provider's 404."""
        self.note(request)
        (key,) = request.path_params.values()
        with self._lock:
            found = table.get(key)
        return not_found(key) if found is None else found

    def _by_id(
        self,
        table: Mapping[str, T],
        not_found: Callable[[str], Response],
        handler: Callable[[Request, T], Response],
    ) -> Callable[[Request], Awaitable[Response]]:
        """An endpoint for a path that names one object of `table`: `handler` answers for it once found."""

        async def endpoint(request: Request) -> Response:
            found = self._lookup(request, table, not_found)
            return found if isinstance(found, Response) else handler(request, found)

        return endpoint

    def _authorised(self, request: Request) -> bool:
        key = self.server.api_key
        if key is None:
            return True
        authorization = request.headers.get("authorization", "")
        given = (
            authorization[7:]
            if authorization.lower().startswith("bearer ")
            else request.headers.get("x-api-key")
        )
        return given == key

    # -- OpenAI files ---------------------------------------------------------------------------

    async def _upload(self, request: Request) -> Response:
        self.note(request)
        if not self._authorised(request):
            return _openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        form = await request.form()
        upload = form.get("file")
        purpose = form.get("purpose")
        if upload is None or isinstance(upload, str):
            return _openai_error(
                400, "Missing required parameter: 'file'.", param="file", code="missing_required_parameter"
            )
        if purpose not in ("batch", "assistants", "fine-tune", "vision", "user_data", "evals"):
            return _openai_error(
                400, f"Invalid value for 'purpose': {purpose!r}.", param="purpose", code="invalid_value"
            )
        content = await upload.read()
        if len(content) > self.plan.max_file_bytes:
            return _openai_error(
                400,
                f"File is too large: {len(content)} bytes, limit {self.plan.max_file_bytes}.",
                param="file",
            )
        stored = StoredFile(
            f"file-{uuid.uuid4().hex[:24]}",
            upload.filename or "upload",
            str(purpose),
            content,
            int(time.time()),
        )
        with self._lock:
            self.files[stored.id] = stored
        return JSONResponse(stored.obj())

    def _file(self, request: Request, stored: StoredFile) -> Response:
        if request.method == "DELETE":
            with self._lock:
                if self.files.pop(stored.id, None) is None:  # deleted meanwhile
                    return _no_file(stored.id)
            return JSONResponse({"id": stored.id, "object": "file", "deleted": True})
        return JSONResponse(stored.obj())

    def _file_content(self, request: Request, stored: StoredFile) -> Response:
        return Response(stored.content, media_type="application/octet-stream")

    # -- OpenAI batches -------------------------------------------------------------------------

    async def _openai_batches(self, request: Request) -> Response:
        if _gemini_client(request):  # Gemini's `GET /v1/batches` on the same loopback port
            return await self.gemini.list(request)
        self.note(request)
        if not self._authorised(request):
            return _openai_error(401, "Incorrect API key provided.", code="invalid_api_key")
        if request.method == "GET":
            return self._openai_list(request)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _openai_error(400, "We could not parse the JSON body of your request.")
        endpoint = body.get("endpoint")
        if endpoint not in ("/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"):
            return _openai_error(
                400, f"Invalid value for 'endpoint': {endpoint!r}.", param="endpoint", code="invalid_value"
            )
        if body.get("completion_window") != "24h":
            return _openai_error(
                400,
                "Invalid value for 'completion_window': only '24h' is supported.",
                param="completion_window",
            )
        file_id = body.get("input_file_id")
        with self._lock:
            stored = self.files.get(file_id) if isinstance(file_id, str) else None
        if stored is None:
            return _openai_error(400, f"Invalid 'input_file_id': {file_id!r}.", param="input_file_id")
        batch = OpenAIBatch(
            id=f"batch_{uuid.uuid4().hex[:24]}",
            endpoint=endpoint,
            input_file_id=stored.id,
            completion_window="24h",
            metadata=body.get("metadata"),
            created_at=int(time.time()),
        )
        with self._lock:
            self.openai[batch.id] = batch
        return self.created(batch.id, JSONResponse(batch.obj()))

    def take_refusal(self) -> bool:
        """Whether this create call is one the plan refuses for the queue (counts it down)."""
        with self._lock:
            if self.plan.refuse_creates <= 0:
                return False
            self.plan.refuse_creates -= 1
            return True

    def created(self, batch_id: str, answer: Response) -> Response:
        """The create call's answer, after the plan's kill points."""
        if self.plan.on_create is not None:
            self.plan.on_create(batch_id)
        if self.plan.drop_create_answer:
            return DroppedResponse()
        return answer

    def seed_openai(self, count: int, *, model: str = "gpt-4o", created_at: int | None = None) -> list[str]:
        """Batches of other users of the organisation (completed, other metadata): a busy listing."""
        made = []
        stamp = int(time.time()) if created_at is None else created_at
        with self._lock:
            for n in range(count):
                batch = OpenAIBatch(
                    id=f"batch_{uuid.uuid4().hex[:24]}",
                    endpoint="/v1/chat/completions",
                    input_file_id=f"file-{uuid.uuid4().hex[:24]}",
                    completion_window="24h",
                    metadata={"owner": f"someone-else-{n}"},
                    created_at=stamp,
                    status="completed",
                    model=model,
                )
                self.openai[batch.id] = batch
                made.append(batch.id)
        return made

    def _openai_list(self, request: Request) -> Response:
        raw = request.query_params.get("limit", "20")
        limit = int(raw) if raw.lstrip("-").isdigit() else 0
        if limit > 100:
            return _openai_error(
                400,
                f"Invalid 'limit': integer above maximum value. Expected a value <= 100, but got {limit} instead.",
                param="limit",
                code="integer_above_max_value",
            )
        if limit < 1:
            return _openai_error(
                400,
                f"Invalid 'limit': integer below minimum value. Expected a value >= 1, but got {raw} instead.",
                param="limit",
                code="integer_below_min_value",
            )
        after = request.query_params.get("after")
        with self._lock:
            batches = sorted(self.openai.values(), key=lambda b: (b.created_at, b.order), reverse=True)
            if after is not None:
                ids = [b.id for b in batches]
                batches = batches[ids.index(after) + 1 :] if after in ids else []
            page = batches[:limit]
            data = [b.obj() for b in page]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
                "has_more": len(batches) > limit,
            }
        )

    async def _openai_retrieve(self, request: Request) -> Response:
        if _gemini_client(request):
            return await self.gemini.one(request, request.path_params["batch_id"])
        batch = self._lookup(request, self.openai, _no_openai_batch)
        if isinstance(batch, Response):
            return batch
        self._advance(batch)
        with self._lock:
            return JSONResponse(batch.obj())

    def _openai_cancel(self, request: Request, batch: OpenAIBatch) -> Response:
        with self._lock:
            if batch.status not in ("validating", "in_progress", "finalizing"):
                return _openai_error(
                    409, f"Cannot cancel a batch with status '{batch.status}'.", param="batch_id"
                )
            batch.status = "cancelling"
            batch.stamps["cancelling"] = int(time.time())
            batch.polls = 0
            return JSONResponse(batch.obj())

    def _advance(self, batch: OpenAIBatch) -> None:
        """One poll: move the batch on by the plan."""
        plan = self.plan
        with self._lock:
            batch.polls += 1
            if batch.polls < plan.polls_per_status:
                return
            batch.polls = 0
            status = batch.status
        now = int(time.time())
        if status == "validating":
            errors = (
                self._validate(batch)
                if plan.outcome != "fail"
                else [
                    {
                        "code": "invalid_request",
                        "message": "loopback: the batch failed validation",
                        "param": None,
                        "line": 1,
                    }
                ]
            )
            with self._lock:
                if errors:
                    batch.errors, batch.status = errors, "failed"
                    batch.stamps["failed"] = now
                else:
                    batch.status = "in_progress"
                    batch.stamps["in_progress"] = now
        elif status == "in_progress":
            if plan.outcome == "stall":
                return
            if plan.outcome == "expire":
                run, left = self._split(batch.lines, lambda line: line["body"])
                self._run_lines(batch, run)
                self._leave(batch, left, "batch_expired", EXPIRED_MESSAGE)
                self._finish(batch, "expired", now)
                return
            self._run_lines(batch, batch.lines)
            with self._lock:
                batch.status = "finalizing"
                batch.stamps["finalizing"] = now
        elif status == "finalizing":
            self._finish(batch, "completed", now)
        elif status == "cancelling":
            done = {line["custom_id"] for line in batch.output} | {
                line["custom_id"] for line in batch.error_lines
            }
            self._leave(
                batch,
                [line for line in batch.lines if line["custom_id"] not in done],
                "batch_cancelled",
                CANCELLED_MESSAGE,
            )
            self._finish(batch, "cancelled", now)

    def _validate(self, batch: OpenAIBatch) -> list[dict[str, Any]]:
        with self._lock:
            content = self.files[batch.input_file_id].content
        errors: list[dict[str, Any]] = []
        seen: set[str] = set()
        lines: list[dict[str, Any]] = []
        for number, raw in enumerate(content.decode("utf-8").splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except ValueError:
                errors.append(
                    {
                        "code": "invalid_json_line",
                        "message": "This line is not parseable as valid JSON.",
                        "param": None,
                        "line": number,
                    }
                )
                continue
            custom_id = line.get("custom_id")
            if not isinstance(custom_id, str) or custom_id in seen:
                errors.append(
                    {
                        "code": "duplicate_custom_id",
                        "message": "The custom_id for this request is a duplicate of another request. The custom_id parameter must be unique for each request in a batch.",
                        "param": "custom_id",
                        "line": number,
                    }
                )
                continue
            seen.add(custom_id)
            if line.get("method") != "POST" or line.get("url") != batch.endpoint:
                errors.append(
                    {
                        "code": "mismatched_endpoint",
                        "message": f"The provided url {line.get('url')!r} does not match the batch's endpoint {batch.endpoint!r}.",
                        "param": "url",
                        "line": number,
                    }
                )
                continue
            if not isinstance(line.get("body"), dict):
                errors.append(
                    {
                        "code": "missing_required_parameter",
                        "message": "Missing required parameter: 'body'.",
                        "param": "body",
                        "line": number,
                    }
                )
                continue
            lines.append(line)
        if len(lines) > self.plan.max_requests:
            errors.append(
                {
                    "code": "too_many_requests",
                    "message": f"The batch has {len(lines)} requests; the limit is {self.plan.max_requests}.",
                    "param": None,
                    "line": None,
                }
            )
        if not lines and not errors:
            errors.append(
                {
                    "code": "empty_file",
                    "message": "The batch input file is empty.",
                    "param": None,
                    "line": None,
                }
            )
        with self._lock:
            batch.lines = lines
        if not errors:
            errors = self._queue_check(batch)
        return errors

    def _queue_check(self, batch: OpenAIBatch) -> list[dict[str, Any]]:
        """OpenAI's enqueued-token limit: the prompt tokens of the model's unfinished batches."""
        protocol = OPENAI_ENDPOINTS.get(batch.endpoint, "openai")
        tokens = 0
        for line in batch.lines:
            record = RecordedRequest(
                protocol=protocol, path=batch.endpoint, headers={}, body=line["body"], model=""
            )
            try:
                (parse_responses if protocol == "openai-responses" else parse_openai)(line["body"], record)
            except RequestShapeError:
                continue
            batch.model = batch.model or record.model
            tokens += provider_prompt_tokens(record)
        batch.prompt_tokens = tokens
        limit = self.plan.queue_limit_tokens
        if limit is None:
            return []
        with self._lock:
            enqueued = sum(
                other.prompt_tokens
                for other in self.openai.values()
                if other is not batch and other.model == batch.model and other.status in QUEUE_STATUSES
            )
        if enqueued + tokens <= limit:
            return []
        return [
            {
                "code": "token_limit_exceeded",
                "message": f"Enqueued token limit reached for {batch.model} in organization org-loopback. "
                f"Limit: {limit:,} enqueued tokens. Please try again once some in_progress batches have been "
                "completed.",
                "param": None,
                "line": None,
            }
        ]

    def _split(
        self, lines: list[dict[str, Any]], body_of: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(run before expiry, left to expire) by the plan."""
        picks = self.plan.expires
        if picks is None:
            cut = self.plan.run_before_expiry
            return lines[:cut], lines[cut:]
        return [x for x in lines if not picks(body_of(x))], [x for x in lines if picks(body_of(x))]

    def _run_lines(self, batch: OpenAIBatch, lines: list[dict[str, Any]]) -> None:
        protocol = OPENAI_ENDPOINTS.get(batch.endpoint, "openai")
        for line in lines:
            status, body = self.server.answer_now(protocol, batch.endpoint, line["body"], via=batch.id)
            entry = {
                "id": f"batch_req_{uuid.uuid4().hex[:24]}",
                "custom_id": line["custom_id"],
                "response": {"status_code": status, "request_id": uuid.uuid4().hex, "body": body},
                "error": None,
            }
            with self._lock:
                (batch.output if status == 200 else batch.error_lines).append(entry)

    def _leave(self, batch: OpenAIBatch, lines: list[dict[str, Any]], code: str, message: str) -> None:
        with self._lock:
            for line in lines:
                batch.error_lines.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
                        "custom_id": line["custom_id"],
                        "response": None,
                        "error": {"code": code, "message": message},
                    }
                )

    def _finish(self, batch: OpenAIBatch, status: str, now: int) -> None:
        with self._lock:
            self._partial_and_shuffled(batch.output)
            self._partial_and_shuffled(batch.error_lines)
            if batch.output:
                batch.output_file_id = self._store_jsonl(
                    batch.output, f"{batch.id}_output.jsonl", "batch_output"
                )
            if batch.error_lines:
                batch.error_file_id = self._store_jsonl(
                    batch.error_lines, f"{batch.id}_error.jsonl", "batch_output"
                )
            batch.status = status
            batch.stamps[status] = now

    def _partial_and_shuffled(self, lines: list[dict[str, Any]]) -> None:
        """Results as the plan says: the first `missing_results` custom ids left out, the rest shuffled."""
        drop = set(sorted(line["custom_id"] for line in lines)[: self.plan.missing_results])
        lines[:] = [line for line in lines if line["custom_id"] not in drop]
        if self.plan.shuffle:
            random.shuffle(lines)

    def _store_jsonl(self, lines: list[dict[str, Any]], name: str, purpose: str) -> str:
        content = "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")
        stored = StoredFile(f"file-{uuid.uuid4().hex[:24]}", name, purpose, content, int(time.time()))
        self.files[stored.id] = stored
        return stored.id

    # -- Anthropic message batches -------------------------------------------------------------

    async def _anthropic_batches(self, request: Request) -> Response:
        self.note(request)
        if not self._authorised(request):
            return JSONResponse(error_body("anthropic", 401, "invalid x-api-key"), status_code=401)
        if request.method == "GET":
            return self._anthropic_list(request)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _anthropic_error(400, "request body is not valid JSON")
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return _anthropic_error(400, "requests: Field required (a non-empty list)")
        if len(requests) > self.plan.max_requests:
            return _anthropic_error(400, f"requests: at most {self.plan.max_requests} requests per batch")
        if self.take_refusal():
            return _anthropic_error(429, "loopback: too many batch requests in the processing queue")
        seen: set[str] = set()
        for index, entry in enumerate(requests):
            custom_id = entry.get("custom_id") if isinstance(entry, dict) else None
            if not isinstance(custom_id, str) or not ANTHROPIC_CUSTOM_ID.match(custom_id):
                return _anthropic_error(
                    400, f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )
            if custom_id in seen:
                return _anthropic_error(400, f"requests.{index}.custom_id: duplicate custom_id {custom_id!r}")
            seen.add(custom_id)
            if not isinstance(entry.get("params"), dict):
                return _anthropic_error(400, f"requests.{index}.params: Field required")
        batch = MessageBatch(f"msgbatch_{uuid.uuid4().hex[:24]}", requests, datetime.now(UTC))
        with self._lock:
            self.anthropic[batch.id] = batch
        return self.created(batch.id, JSONResponse(batch.obj(self.server.url)))

    def _anthropic_list(self, request: Request) -> Response:
        raw = request.query_params.get("limit", "20")
        limit = int(raw) if raw.isdigit() else 0
        if not 1 <= limit <= 1000:
            return _anthropic_error(
                400, "limit: Input should be greater than or equal to 1 and less than or equal to 1000"
            )
        after, before = request.query_params.get("after_id"), request.query_params.get("before_id")
        with self._lock:
            batches = sorted(self.anthropic.values(), key=lambda b: (b.created_at, b.order), reverse=True)
            ids = [b.id for b in batches]
            if after is not None:
                batches = batches[ids.index(after) + 1 :] if after in ids else []
                page, more = batches[:limit], len(batches) > limit
            elif before is not None:
                batches = batches[: ids.index(before)] if before in ids else []
                page, more = batches[-limit:], len(batches) > limit
            else:
                page, more = batches[:limit], len(batches) > limit
            data = [b.obj(self.server.url) for b in page]
        return JSONResponse(
            {
                "data": data,
                "has_more": more,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None,
            }
        )

    def seed_anthropic(self, requests_each: list[int], *, ended: bool = False) -> list[str]:
        """Message batches of other users of the organisation, created now (same window as a run's)."""
        made = []
        with self._lock:
            for count in requests_each:
                requests = [
                    {"custom_id": f"other-{uuid.uuid4().hex[:12]}", "params": {}} for _ in range(count)
                ]
                batch = MessageBatch(f"msgbatch_{uuid.uuid4().hex[:24]}", requests, datetime.now(UTC))
                if ended:
                    batch.processing_status = "ended"
                    batch.ended_at = datetime.now(UTC)
                    batch.results = [
                        {"custom_id": r["custom_id"], "result": {"type": "expired"}} for r in requests
                    ]
                else:
                    batch.foreign = True
                self.anthropic[batch.id] = batch
                made.append(batch.id)
        return made

    def _anthropic_retrieve(self, request: Request, batch: MessageBatch) -> Response:
        self._advance_messages(batch)
        with self._lock:
            return JSONResponse(batch.obj(self.server.url))

    def _anthropic_cancel(self, request: Request, batch: MessageBatch) -> Response:
        with self._lock:
            if batch.processing_status == "in_progress":
                batch.processing_status = "canceling"
                batch.cancel_initiated_at = datetime.now(UTC)
                batch.polls = 0
            return JSONResponse(batch.obj(self.server.url))

    def _anthropic_results(self, request: Request, batch: MessageBatch) -> Response:
        with self._lock:
            if batch.processing_status != "ended":
                return _anthropic_error(
                    400, f"message batch {batch.id} has not ended yet; results are not available"
                )
            content = "".join(json.dumps(result) + "\n" for result in batch.results)
        return Response(content.encode("utf-8"), media_type="application/binary")

    def _advance_messages(self, batch: MessageBatch) -> None:
        plan = self.plan
        with self._lock:
            batch.polls += 1
            if batch.processing_status == "ended" or batch.polls < plan.polls_per_status:
                return
            status = batch.processing_status
        if status == "in_progress" and plan.outcome == "stall":
            return
        results: list[dict[str, Any]] = []
        expiring: set[str] = set()
        if plan.outcome == "expire":
            _, left = self._split(batch.requests, lambda entry: entry["params"])
            expiring = {entry["custom_id"] for entry in left}
        for entry in batch.requests:
            custom_id = entry["custom_id"]
            if status == "canceling":
                results.append({"custom_id": custom_id, "result": {"type": "canceled"}})
                continue
            if batch.foreign:
                results.append({"custom_id": custom_id, "result": {"type": "expired"}})
                continue
            if custom_id in expiring:
                results.append({"custom_id": custom_id, "result": {"type": "expired"}})
                continue
            code, body = self.server.answer_now("anthropic", "/v1/messages", entry["params"], via=batch.id)
            if code == 200:
                results.append({"custom_id": custom_id, "result": {"type": "succeeded", "message": body}})
            else:
                results.append({"custom_id": custom_id, "result": {"type": "errored", "error": body}})
        with self._lock:
            self._partial_and_shuffled(results)
            batch.results = results
            batch.processing_status = "ended"
            batch.ended_at = datetime.now(UTC)
