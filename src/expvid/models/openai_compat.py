"""OpenAI-compatible chat completions (vLLM, SGLang, DeepSeek, OpenAI) over plain httpx2.

Plain HTTP rather than the `openai` SDK: the SDK's own retries, response models and error types would
sit between us and the status codes, Retry-After headers and raw bodies the retry policy needs, and its
models hide server-specific fields such as vLLM's `reasoning_content`.

httpx2 rather than httpx 0.28: it is the same API (and what the official SDKs now ship on), and its
connection pool stays cheap with many connections, where httpx 0.28's pool rescans every connection
for every request. Measured here at 64 requests in flight against the loopback server: 81 req/s with
httpx 0.28, 360 req/s with httpx2.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2

from expvid.models.openai_wire import chat_body, parse_chat_completion
from expvid.models.options import BackendOptions
from expvid.models.remote import RemoteBackend
from expvid.models.retry import AttemptFailure, failure_for_status
from expvid.models.types import GenerateRequest, GenerateResponse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class OpenAICompatBackend(RemoteBackend):
    kind = "openai"

    def __init__(self, model: str, *, base_url: str, api_key: str | None, options: BackendOptions) -> None:
        super().__init__(model, base_url=base_url.rstrip("/"), options=options)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._api_key_set = api_key is not None

    def _new_client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            base_url=self.base_url or "",
            headers=self._headers,
            timeout=httpx2.Timeout(self.options.timeout_s),
            # The limiter caps requests in flight; the pool must not add a second, hidden queue.
            limits=httpx2.Limits(max_connections=None, max_keepalive_connections=self.options.concurrency),
        )

    def _wire_options(self) -> dict[str, Any]:
        return {
            "extra_body": self.options.extra_body,
            "thinking_style": self.options.thinking_style,
            "max_tokens_param": self.options.max_tokens_param,
        }

    def _describe_extra(self) -> dict[str, Any]:
        return {
            "api_key_set": self._api_key_set,
            "thinking_style": self.options.thinking_style,
            "max_tokens_param": self.options.max_tokens_param,
        }

    def _api_key_env(self) -> str | None:
        return self.options.api_key_env or DEFAULT_KEY_ENV

    def _prepare(self, request: GenerateRequest) -> dict[str, Any]:
        return chat_body(
            request,
            model=self.model,
            thinking_style=self.options.thinking_style,
            max_tokens_param=self.options.max_tokens_param,
            extra_body=self.options.extra_body,
        )

    async def _send_once(self, payload: dict[str, Any]) -> GenerateResponse:
        return await self._post_chat("/chat/completions", payload)

    async def _post_chat(self, url: str, payload: dict[str, Any]) -> GenerateResponse:
        """One POST of a chat completion to `url` (relative to base_url, or absolute)."""
        try:
            # httpx2 timeouts are per read/write; this one bounds the whole attempt.
            async with asyncio.timeout(self.options.timeout_s):
                response = await self._client().post(url, json=payload)
        except (TimeoutError, httpx2.TimeoutException):
            raise AttemptFailure.timeout(f"no complete answer within {self.options.timeout_s} s") from None
        except httpx2.TransportError as error:
            raise AttemptFailure.network(f"{type(error).__name__}: {error}") from None
        if response.status_code != 200:
            raise failure_for_status(response.status_code, response.headers, response.text)
        return parse_chat_completion(response.content, model=self.model)

    async def _close_client(self, client: httpx2.AsyncClient) -> None:
        await client.aclose()
