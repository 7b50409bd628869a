"""A built backend as a batch run needs it: the provider's line for a request, the parser of a result.

The line's body is composed by the backend's own wire code (`openai_wire` / `responses_wire` /
`anthropic_backend.messages_payload` / `gemini_backend.gemini_payload`) with its parameter rules
and the fallbacks this run has learned,
so a batched request is exactly the online one, and the record of what was sent (`sent`) is the
same. A result body is parsed by the same parser as an online answer. `blind:` backends batch their
inner model with the images removed, as online.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from expvid.models.batch.anthropic_batch import AnthropicBatchAPI
from expvid.models.batch.openai_batch import OpenAIBatchAPI
from expvid.models.batch.types import BatchHandle, BatchLabel, BatchResult, BatchState, Lookup
from expvid.models.blind import BlindBackend
from expvid.models.cache import ResponseCache
from expvid.models.remote import check_image_cap
from expvid.models.types import BackendConfigError, GenerateRequest, GenerateResponse, ModelBackend


class BatchAPI(Protocol):
    """A provider's batch endpoints. `create` is never repeated once it may have reached the
    provider (`BatchAPIError.uncertain`); `lookup` finds what a create whose answer was not recorded
    made (certain matches by label, or candidates to settle by their custom ids)."""

    provider: str

    async def upload(self, lines_file: Path) -> str | None: ...

    async def create(
        self, lines_file: Path, *, input_file_id: str | None, label: BatchLabel
    ) -> BatchHandle: ...

    async def poll(self, handle: BatchHandle) -> BatchState: ...

    async def results(self, handle: BatchHandle, custom_ids: list[str]) -> list[BatchResult]: ...

    async def custom_ids(self, handle: BatchHandle) -> set[str]: ...

    async def cancel(self, handle: BatchHandle) -> BatchState: ...

    async def listing(self, since: datetime | None = None) -> list[BatchState]: ...

    async def lookup(self, label: BatchLabel, *, since: datetime, n_requests: int) -> Lookup: ...

    async def cleanup(self, handle: BatchHandle) -> None: ...


@dataclass
class BatchAdapter:
    provider: str
    #: What the lines ask for ("/v1/chat/completions", "/v1/responses", "/v1/messages").
    endpoint: str
    api: BatchAPI
    backend: Any
    _line: Callable[[str, GenerateRequest], tuple[dict[str, Any], dict[str, Any]]]
    _parse: Callable[[dict[str, Any]], GenerateResponse]
    strip_images: bool = False

    def request_for(self, request: GenerateRequest) -> GenerateRequest:
        return request.without_images() if self.strip_images else request

    def line(self, custom_id: str, request: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        """The provider's JSONL line for `request`, and what it sends (as an online prediction records
        it). Raises BackendError for a request the backend would refuse (over the image cap)."""
        request = self.request_for(request)
        check_image_cap(request, self.backend.max_images, self.backend.name)
        return self._line(custom_id, request)

    def parse(self, body: dict[str, Any]) -> GenerateResponse:
        """A result body as the online answer (AttemptFailure for one that is not an answer)."""
        return self._parse(body)

    def request_hash(self, request: GenerateRequest) -> str:
        return str(self.backend.request_hash(self.request_for(request)))

    @property
    def cache(self) -> ResponseCache | None:
        cache: ResponseCache | None = getattr(self.backend, "cache", None)
        return cache


def batch_adapter(backend: ModelBackend) -> BatchAdapter:
    """The adapter for `backend`; BackendConfigError for a backend without a supported batch API."""
    strip = False
    if isinstance(backend, BlindBackend):
        backend, strip = backend.inner, True
    from expvid.models.anthropic_backend import AnthropicBackend
    from expvid.models.gemini_backend import GeminiBackend
    from expvid.models.multi_endpoint import MultiEndpointBackend
    from expvid.models.openai_compat import OpenAICompatBackend

    if isinstance(backend, MultiEndpointBackend):
        raise BackendConfigError("--batch sends a batch to one provider endpoint: give one base URL")
    if isinstance(backend, OpenAICompatBackend):
        return _openai(backend, strip)
    if isinstance(backend, AnthropicBackend):
        return _anthropic(backend, strip)
    if isinstance(backend, GeminiBackend):
        return _gemini(backend, strip)
    raise BackendConfigError(
        f"--batch: {backend.name} has no batch API here; batch runs support openai: (Batch API over chat "
        "completions or responses), anthropic: (Message Batches) and gemini: (batch mode)"
    )


def _openai(backend: Any, strip: bool) -> BatchAdapter:
    endpoint = "/v1" + backend.api_path

    def line(custom_id: str, request: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        prepared = backend._prepare(request)
        body, sent = backend._compose(prepared, backend.base_url or "")
        return {"custom_id": custom_id, "method": "POST", "url": endpoint, "body": body}, sent

    def parse(body: dict[str, Any]) -> GenerateResponse:
        parsed: GenerateResponse = backend._parse_body(json.dumps(body).encode("utf-8"))
        return parsed

    api = OpenAIBatchAPI(backend._client, endpoint=endpoint)
    return BatchAdapter("openai", endpoint, api, backend, line, parse, strip)


def _anthropic(backend: Any, strip: bool) -> BatchAdapter:
    from expvid.models.anthropic_backend import parse_message

    def line(custom_id: str, request: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        payload, sent = backend._prepare(request)
        params = {key: value for key, value in payload.items() if key != "extra_body"}
        params.update(payload.get("extra_body") or {})
        return {"custom_id": custom_id, "params": params}, sent

    def parse(body: dict[str, Any]) -> GenerateResponse:
        message = backend._sdk.types.Message.model_validate(body)
        return parse_message(message, model=backend.model)

    api = AnthropicBatchAPI(backend._client, backend._sdk)
    return BatchAdapter("anthropic", "/v1/messages", api, backend, line, parse, strip)


def _gemini(backend: Any, strip: bool) -> BatchAdapter:
    from expvid.models.batch.gemini_batch import GeminiBatchAPI
    from expvid.models.gemini_backend import PreparedGemini, parse_generate_content

    if backend.options.extra_body:
        raise BackendConfigError(
            f"--batch: {backend.name}: extra_body is sent as HTTP options, which a batch request cannot carry"
        )
    types = backend._types

    def line(custom_id: str, request: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        payload, sent = backend._compose(PreparedGemini(request))
        inlined = types.InlinedRequest(
            contents=payload["contents"], config=payload["config"], metadata={"key": custom_id}
        )
        return inlined.model_dump(mode="json", exclude_none=True), sent

    def parse(body: dict[str, Any]) -> GenerateResponse:
        response = types.GenerateContentResponse.model_validate(body)
        return parse_generate_content(response, model=backend.model)

    api = GeminiBatchAPI(backend._client, model=backend.model, types=types, errors=backend._errors)
    return BatchAdapter("gemini", "batchGenerateContent", api, backend, line, parse, strip)
