"""Claude through the official `anthropic` SDK (optional extra: pip install 'expvid[anthropic]').

The SDK is imported when the backend is built, not when expvid is imported, so users of other backends
never need it. Its own retries are switched off (max_retries=0): our retry loop, limiter and cache apply.

The Messages API (SDK 2.x) has no temperature or seed parameter: sampling is the model's own. They are
therefore not sent, and describe() says so, so a run manifest never claims a temperature that was not
applied. A caller who targets an API version that takes one can pass it in extra_body.
"""

from __future__ import annotations

import asyncio
import base64
from typing import TYPE_CHECKING, Any

from expvid.models.options import BackendOptions
from expvid.models.remote import RemoteBackend
from expvid.models.retry import AttemptFailure, failure_for_status
from expvid.models.types import BackendConfigError, GenerateRequest, GenerateResponse, TextPart
from expvid.schema import Usage

if TYPE_CHECKING:
    import anthropic

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: Used when thinking is on but no budget was given; Claude requires >= 1024 and < max_tokens.
DEFAULT_THINKING_BUDGET = 4096


def import_anthropic() -> Any:
    try:
        import anthropic
    except ImportError:
        raise BackendConfigError(
            "the anthropic backend needs the 'anthropic' package: pip install 'expvid[anthropic]'"
        ) from None
    return anthropic


def anthropic_content(parts: list[Any]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            blocks.append({"type": "text", "text": part.text})
        else:
            data = base64.b64encode(part.data).decode("ascii")
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": part.mime, "data": data}}
            )
    return blocks


def messages_payload(
    request: GenerateRequest, *, model: str, extra_body: dict[str, Any] | None
) -> dict[str, Any]:
    """Keyword arguments for `messages.create`. System messages become the top-level `system` field."""
    system = [
        part.text
        for m in request.messages
        if m.role == "system"
        for part in m.content
        if isinstance(part, TextPart)
    ]
    payload: dict[str, Any] = {
        "model": model,
        "max_tokens": request.max_tokens,
        "messages": [
            {"role": m.role, "content": anthropic_content(list(m.content))}
            for m in request.messages
            if m.role != "system"
        ],
    }
    if system:
        payload["system"] = "\n\n".join(system)
    thinking = request.thinking
    if thinking is not None:
        if thinking.enabled and thinking.budget_tokens != 0:
            budget = thinking.budget_tokens or min(
                DEFAULT_THINKING_BUDGET, max(1024, request.max_tokens // 2)
            )
            payload["thinking"] = {"type": "enabled", "budget_tokens": budget}
        else:
            payload["thinking"] = {"type": "disabled"}
    if extra_body:
        payload["extra_body"] = dict(extra_body)
    return payload


def parse_message(message: Any, *, model: str) -> GenerateResponse:
    texts: list[str] = []
    thoughts: list[str] = []
    for block in getattr(message, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "thinking":
            thoughts.append(block.thinking)
    if not texts and not thoughts:
        raise AttemptFailure.malformed("the message has no text and no thinking block")
    usage = getattr(message, "usage", None)
    details = getattr(usage, "output_tokens_details", None)
    return GenerateResponse(
        text="".join(texts) if texts else None,
        reasoning="\n".join(thoughts) if thoughts else None,
        finish_reason=getattr(message, "stop_reason", None),
        usage=Usage(
            prompt_tokens=getattr(usage, "input_tokens", None),
            completion_tokens=getattr(usage, "output_tokens", None),
            reasoning_tokens=getattr(details, "thinking_tokens", None),
        ),
        model=getattr(message, "model", None) or model,
    )


class AnthropicBackend(RemoteBackend):
    kind = "anthropic"

    def __init__(self, model: str, *, base_url: str | None, api_key: str, options: BackendOptions) -> None:
        self._sdk = import_anthropic()
        super().__init__(model, base_url=base_url, options=options)
        self._api_key = api_key

    def _new_client(self) -> anthropic.AsyncAnthropic:
        client: anthropic.AsyncAnthropic = self._sdk.AsyncAnthropic(
            api_key=self._api_key, base_url=self.base_url, timeout=self.options.timeout_s, max_retries=0
        )
        return client

    def _api_key_env(self) -> str | None:
        return self.options.api_key_env or DEFAULT_KEY_ENV

    def _describe_extra(self) -> dict[str, Any]:
        return {"temperature_sent": False, "seed_sent": False}

    def _prepare(self, request: GenerateRequest) -> dict[str, Any]:
        return messages_payload(request, model=self.model, extra_body=self.options.extra_body)

    async def _send_once(self, payload: dict[str, Any]) -> GenerateResponse:
        sdk = self._sdk
        try:
            async with asyncio.timeout(self.options.timeout_s):
                message = await self._client().messages.create(**payload)
        except (TimeoutError, sdk.APITimeoutError):
            raise AttemptFailure.timeout(f"no complete answer within {self.options.timeout_s} s") from None
        except sdk.APIStatusError as error:
            raise failure_for_status(error.status_code, error.response.headers, error.response.text) from None
        except sdk.APIConnectionError as error:
            raise AttemptFailure.network(f"{type(error).__name__}: {error}") from None
        except (sdk.APIResponseValidationError, ValueError) as error:
            raise AttemptFailure.malformed(f"{type(error).__name__}: {error}") from None
        return parse_message(message, model=self.model)

    async def _close_client(self, client: anthropic.AsyncAnthropic) -> None:
        await client.close()
