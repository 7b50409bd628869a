"""A real HTTP server on 127.0.0.1 speaking the OpenAI, Anthropic and Gemini APIs, for tests and benchmarks.

Backends are tested against it exactly as they run in production (real sockets, real SDKs, real
status codes and headers), and the build pipeline, suites and throughput benchmark use it to serve
scripted replies without a model. It validates each request (images decoded and verified), records it,
counts requests in flight, and answers through a programmable responder (see `replies`):

    with LoopbackServer(script(Reply.rate_limited(1), "The answer is B")) as server:
        backend = create_backend(f"openai:test@{server.openai_base_url}")

Provider rules (`rules`: OpenAI reasoning models, OpenAI chat, Anthropic) make it answer
parameters the way those APIs do, with their 400 bodies; without rules it accepts what vLLM accepts
(frames as `image_url` parts or one `video_url` frame sequence).

Routes: POST /v1/chat/completions, POST /v1/responses, GET /v1/models (OpenAI); POST /v1/messages
(Anthropic); POST /{version}/models/{model}:generateContent (Gemini); and the providers' batch
endpoints (`batch`: OpenAI Files + Batches, Anthropic Message Batches; `gemini_batch`:
Gemini's batch mode), whose requests are
answered by the same validation, rules and responder as online ones. uvicorn + Starlette run in a daemon thread
on port 0 (the OS picks a free port), so parallel test runs never collide.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from expvid.fakes.models.batch import BatchEndpoints, BatchPlan
from expvid.fakes.models.render import DroppedResponse, error_body, success_body
from expvid.fakes.models.replies import Reply, Responder, Script, as_reply, echo, fixed, script
from expvid.fakes.models.request_shapes import (
    RecordedRequest,
    RequestShapeError,
    parse_anthropic,
    parse_gemini,
    parse_openai,
    parse_responses,
)
from expvid.fakes.models.rules import (
    AnthropicRules,
    GeminiThinkingRules,
    OpenAIChatRules,
    OpenAIReasoningRules,
    OpenAIResponsesRules,
    Rejection,
    ResponsesOnlyModels,
    Rule,
)
from expvid.fakes.models.usage import provider_prompt_tokens
from expvid.fakes.serving import FakeServer, ServerThread

T = TypeVar("T")

__all__ = [
    "AnthropicRules",
    "BatchPlan",
    "GeminiThinkingRules",
    "LoopbackServer",
    "OpenAIChatRules",
    "OpenAIReasoningRules",
    "OpenAIResponsesRules",
    "RecordedRequest",
    "Rejection",
    "Reply",
    "Responder",
    "ResponsesOnlyModels",
    "Rule",
    "Script",
    "echo",
    "fixed",
    "script",
]

Parser = Callable[[dict[str, Any], RecordedRequest], None]
#: The request parser of each protocol (batch endpoints process their lines with the same ones).
PARSERS: dict[str, Parser] = {
    "openai": parse_openai,
    "openai-responses": parse_responses,
    "anthropic": parse_anthropic,
    "gemini": parse_gemini,
}


class _Recorded(Generic[T]):
    """A list the handlers append to from the server's threads (kept as `_<name>`), read as a copy
    taken under the server's lock."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._attribute = f"_{name}"

    def __get__(self, server: LoopbackServer, owner: type | None = None) -> list[T]:
        with server._lock:
            return list(getattr(server, self._attribute))


class LoopbackServer(FakeServer):
    """A loopback API server; use as a context manager or call start() / stop()."""

    def __init__(
        self,
        responder: Responder | Reply | str = "OK",
        *,
        api_key: str | None = None,
        models: tuple[str, ...] = ("loopback",),
        host: str = "127.0.0.1",
        port: int = 0,
        rules: Sequence[Rule] = (),
    ) -> None:
        self.responder = responder
        #: Provider parameter rules (`rules`), applied in order to every valid request.
        self.rules: list[Rule] = list(rules)
        self.api_key = api_key
        self.models = models
        self.host = host
        self._requested_port = port
        self.port = 0
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._rejections: list[str] = []
        self._refused: list[RecordedRequest] = []
        self._responder_errors: list[str] = []
        self._in_flight = 0
        self._max_in_flight = 0
        #: The providers' batch endpoints (files, batches, message batches) and how they behave.
        self.batches = BatchEndpoints(self)

    # -- configuration and inspection (called from the test's thread) ---------------------------

    @property
    def responder(self) -> Responder:
        return self._responder

    @responder.setter
    def responder(self, value: Responder | Reply | str) -> None:
        self._responder = value if callable(value) else fixed(value)

    def reset(self, responder: Responder | Reply | str | None = None, *, rules: Sequence[Rule] = ()) -> None:
        """Forget recorded requests and counters; optionally install a new responder; set the rules
        (none by default, so a shared server never carries one test's provider rules into the next)."""
        self.rules = list(rules)
        self.batches.clear()
        with self._lock:
            self._requests.clear()
            self._rejections.clear()
            self._refused.clear()
            self._responder_errors.clear()
            self._max_in_flight = self._in_flight
        if responder is not None:
            self.responder = responder

    requests = _Recorded[RecordedRequest]()
    #: Why requests were refused with 400/401 (bad shape, bad image, wrong key).
    rejections = _Recorded[str]()
    #: Well-formed requests that a provider rule answered with an error (in arrival order).
    refused = _Recorded[RecordedRequest]()
    responder_errors = _Recorded[str]()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """Most requests that were being handled at the same time since start or reset()."""
        return self._max_in_flight

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    #: The Anthropic and Gemini SDKs take the server's root (their paths carry the API version).
    anthropic_base_url = gemini_base_url = FakeServer.url

    # -- lifecycle ------------------------------------------------------------------------------

    def _server_thread(self) -> ServerThread:
        return ServerThread(
            self._app(),
            host=self.host,
            port=self._requested_port,
            name="loopback",
            timeout_graceful_shutdown=1,
            backlog=4096,
        )

    # -- the ASGI app (runs in the server thread) -----------------------------------------------

    def _app(self) -> Starlette:
        async def chat_completions(request: Request) -> Response:
            return await self._serve("openai", request, parse_openai)

        async def responses(request: Request) -> Response:
            return await self._serve("openai-responses", request, parse_responses)

        async def list_models(_request: Request) -> Response:
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "loopback"} for m in self.models]
            return JSONResponse({"object": "list", "data": data})

        async def messages(request: Request) -> Response:
            return await self._serve("anthropic", request, parse_anthropic)

        async def generate_content(request: Request) -> Response:
            model, _, action = request.path_params["model_action"].partition(":")
            if action == "batchGenerateContent":
                return await self.batches.gemini.create(request, model)
            if action != "generateContent":
                body = error_body("gemini", 404, f"loopback serves generateContent only, not {action!r}")
                return JSONResponse(body, status_code=404)
            return await self._serve("gemini", request, parse_gemini, model=model)

        routes = [
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            *self.batches.routes(),
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/{version}/models/{model_action}", generate_content, methods=["POST"]),
        ]
        return Starlette(routes=routes)

    def answer_now(
        self, protocol: str, path: str, body: Any, *, via: str, model: str = ""
    ) -> tuple[int, dict[str, Any]]:
        """Validate, apply the rules and answer one request at once: (status, JSON body).

        The batch endpoints answer each line of a batch through this, so a batched request meets
        exactly what an online one meets (shape checks, provider rules, the responder); delays are
        skipped and a dropped connection or a broken body becomes a 500 for that line.
        """
        record = RecordedRequest(protocol=protocol, path=path, headers={}, body={}, model=model, via=via)
        try:
            if not isinstance(body, dict):
                raise RequestShapeError("body must be a JSON object")
            record.body = body
            PARSERS[protocol](body, record)
        except RequestShapeError as error:
            with self._lock:
                self._rejections.append(str(error))
            return 400, error_body(protocol, 400, str(error))
        rejection = self._refusal(record)
        if rejection is not None:
            return rejection.status, rejection.body
        with self._lock:
            record.index = len(self._requests)
            record.received_at = time.monotonic()
            self._requests.append(record)
        reply = _with_usage(self._reply_to(record), record)
        if reply.drop_connection or reply.raw_body is not None:
            return 500, error_body(protocol, 500, "loopback: the answer could not be produced")
        if reply.status != 200:
            return reply.status, error_body(
                protocol, reply.status, reply.error_message or f"error {reply.status}"
            )
        return 200, success_body(protocol, reply, record.model)

    def _refusal(self, record: RecordedRequest) -> Rejection | None:
        """The first provider rule's refusal of `record` (recorded as refused), or None."""
        for rule in list(self.rules):
            rejection = rule(record)
            if rejection is not None:
                with self._lock:
                    self._refused.append(record)
                    self._rejections.append(json.dumps(rejection.body))
                return rejection
        return None

    def _reply_to(self, record: RecordedRequest) -> Reply:
        """The responder's reply to `record`; a 500 when the responder itself fails (recorded)."""
        try:
            return as_reply(self._responder(record))
        except Exception as error:
            with self._lock:
                self._responder_errors.append(f"{type(error).__name__}: {error}")
            return Reply.error(500, f"loopback responder failed: {error}")

    def _reject(self, protocol: str, status: int, message: str) -> Response:
        with self._lock:
            self._rejections.append(message)
        return JSONResponse(error_body(protocol, status, message), status_code=status)

    async def _serve(self, protocol: str, request: Request, parse: Parser, model: str = "") -> Response:
        raw = await request.body()
        headers = {key.lower(): value for key, value in request.headers.items()}
        record = RecordedRequest(
            protocol=protocol, path=request.url.path, headers=headers, body={}, model=model
        )
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise RequestShapeError("body must be a JSON object")
            record.body = body
            parse(body, record)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return self._reject(protocol, 400, "body is not JSON")
        except RequestShapeError as error:
            return self._reject(protocol, 400, str(error))
        if self.api_key is not None and record.api_key != self.api_key:
            return self._reject(protocol, 401, "missing or wrong API key")
        rejection = self._refusal(record)
        if rejection is not None:
            return JSONResponse(rejection.body, status_code=rejection.status)

        with self._lock:
            record.index = len(self._requests)
            record.received_at = time.monotonic()
            self._requests.append(record)
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            reply = self._reply_to(record)
            if reply.delay_s > 0:
                await _sleep_unless_disconnected(request, reply.delay_s)
        finally:
            with self._lock:
                self._in_flight -= 1
        return _render(protocol, _with_usage(reply, record), record.model)


def _with_usage(reply: Reply, record: RecordedRequest) -> Reply:
    """A `Reply.counted` answer with the prompt tokens the provider would count for `record`."""
    if not reply.count_usage:
        return reply
    return dataclasses.replace(reply, prompt_tokens=provider_prompt_tokens(record), count_usage=False)


def _render(protocol: str, reply: Reply, model: str) -> Response:
    if reply.drop_connection:
        return DroppedResponse()
    headers = dict(reply.headers)
    if reply.raw_body is not None:
        return Response(
            reply.raw_body, status_code=reply.status, headers=headers, media_type="application/json"
        )
    if reply.status != 200:
        message = reply.error_message or f"loopback error {reply.status}"
        return JSONResponse(
            error_body(protocol, reply.status, message), status_code=reply.status, headers=headers
        )
    return JSONResponse(success_body(protocol, reply, model), headers=headers)


async def _sleep_unless_disconnected(request: Request, delay_s: float) -> None:
    """Sleep, but stop early when the client hangs up (a timed-out client is no longer waiting)."""
    deadline = time.monotonic() + delay_s
    while (left := deadline - time.monotonic()) > 0:
        await asyncio.sleep(min(0.05, left))
        if await request.is_disconnected():
            return
