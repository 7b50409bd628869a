"""Claude through the official `anthropic` SDK (optional extra: pip install 'expvid[anthropic]').

The SDK is imported when the backend is built, not when expvid is imported, so users of other backends
never need it. Its own retries are switched off (max_retries=0): our retry loop, limiter and cache apply.

Temperature is sent where the installed SDK's `messages.create` takes it (SDK 0.x/1.x; the paper's
F.2 value, 0.1), except with extended thinking, which requires temperature 1 ("`temperature` may
only be set to 1 when thinking is enabled"), so none is sent then. SDK 2.x has no temperature
parameter at all: nothing is sent. Either way every prediction records what was sent and why
(`sent["not_sent"]`), and reports note the departure from F.2. Claude has no seed parameter.

The API takes at most 100 images per request (models with a 200k-token context; Anthropic's vision
guide): `image_limit` tells the runner, which samples at most 100 frames and says so. The paper ran
Claude-Sonnet-4 at 96 frames on Level 3 (`--frame-preset claude-sonnet-4`).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
from importlib import metadata
from typing import TYPE_CHECKING, Any

from expvid.models.options import BackendOptions
from expvid.models.remote import ImageLimit, RemoteBackend
from expvid.models.retry import AttemptFailure, failure_for_status, unreachable
from expvid.models.types import BackendConfigError, GenerateRequest, GenerateResponse, TextPart
from expvid.schema import Usage

if TYPE_CHECKING:
    import anthropic

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
#: Used when thinking is on but no budget was given; Claude requires >= 1024 and < max_tokens.
DEFAULT_THINKING_BUDGET = 4096
CLAUDE_IMAGE_LIMIT = ImageLimit(
    100, "Anthropic Messages API: at most 100 images per request (models with a 200k-token context)"
)
THINKING_TEMPERATURE = (
    "Claude extended thinking requires temperature 1: not settable while thinking is enabled"
)


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


def sdk_takes_temperature(sdk: Any) -> bool:
    """Whether the installed SDK's `messages.create` has a `temperature` parameter."""
    try:
        create = sdk.resources.messages.AsyncMessages.create
        return "temperature" in inspect.signature(create).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def messages_payload(
    request: GenerateRequest,
    *,
    model: str,
    extra_body: dict[str, Any] | None,
    takes_temperature: bool = False,
    sdk_version: str = "unknown",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Keyword arguments for `messages.create`, and the record of what they send.

    System messages become the top-level `system` field.
    """
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
    sent: dict[str, Any] = {
        "token_limit_field": "max_tokens",
        "max_tokens": request.max_tokens,
        "input_mode": "images",
    }
    not_sent: dict[str, str] = {}
    if system:
        payload["system"] = "\n\n".join(system)
    thinking = request.thinking
    thinking_on = False
    if thinking is not None:
        if thinking.enabled and thinking.budget_tokens != 0:
            budget = thinking.budget_tokens or min(
                DEFAULT_THINKING_BUDGET, max(1024, request.max_tokens // 2)
            )
            payload["thinking"] = {"type": "enabled", "budget_tokens": budget}
            sent["thinking_budget"] = budget
            thinking_on = True
        else:
            payload["thinking"] = {"type": "disabled"}
            sent["thinking_budget"] = 0
    if thinking_on:
        not_sent["temperature"] = THINKING_TEMPERATURE
    elif not takes_temperature:
        not_sent["temperature"] = f"the installed anthropic SDK ({sdk_version}) has no temperature parameter"
    else:
        payload["temperature"] = request.temperature
    sent["temperature"] = payload.get("temperature")
    if request.seed is not None:
        not_sent["seed"] = "the Messages API has no seed parameter"
    if request.response_schema is not None:
        not_sent["response_format"] = (
            "the Messages API takes no JSON schema for a reply; the prompt alone asks for it"
        )
    sent["seed"] = None
    if extra_body:
        payload["extra_body"] = dict(extra_body)
        if "temperature" in extra_body:
            sent["temperature"] = extra_body["temperature"]
            not_sent.pop("temperature", None)
    sent["not_sent"] = not_sent
    return payload, sent


def parse_message(message: Any, *, model: str) -> GenerateResponse:
    texts: list[str] = []
    thoughts: list[str] = []
    for block in getattr(message, "content", None) or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "thinking":
            thoughts.append(block.thinking)
    stop_reason = getattr(message, "stop_reason", None)
    refusal: str | None = None
    if stop_reason == "refusal":
        # Claude declined (its classifiers stopped the answer): a model answer, scored unparseable;
        # whatever text came before the stop is kept as the refusal's text, never as an answer.
        refusal = "".join(texts).strip() or "stop_reason: refusal"
        texts = []
    elif not texts and not thoughts:
        raise AttemptFailure.malformed("the message has no text and no thinking block")
    usage = getattr(message, "usage", None)
    details = getattr(usage, "output_tokens_details", None)
    return GenerateResponse(
        text="" if refusal is not None else ("".join(texts) if texts else None),
        refusal=refusal,
        reasoning="\n".join(thoughts) if thoughts else None,
        finish_reason=stop_reason,
        usage=Usage(
            prompt_tokens=getattr(usage, "input_tokens", None),
            completion_tokens=getattr(usage, "output_tokens", None),
            reasoning_tokens=getattr(details, "thinking_tokens", None),
        ),
        model=getattr(message, "model", None) or model,
    )


class AnthropicBackend(RemoteBackend):
    kind = "anthropic"
    image_limit = CLAUDE_IMAGE_LIMIT

    def __init__(self, model: str, *, base_url: str | None, api_key: str, options: BackendOptions) -> None:
        if options.input_mode == "video":
            raise BackendConfigError(
                f"anthropic:{model}: Claude takes images, not videos; use --input-mode images"
            )
        self._sdk = import_anthropic()
        super().__init__(model, base_url=base_url, options=options)
        self._api_key = api_key
        self._takes_temperature = sdk_takes_temperature(self._sdk)
        try:
            self._sdk_version = metadata.version("anthropic")
        except metadata.PackageNotFoundError:
            self._sdk_version = str(getattr(self._sdk, "__version__", "unknown"))

    def _new_client(self) -> anthropic.AsyncAnthropic:
        client: anthropic.AsyncAnthropic = self._sdk.AsyncAnthropic(
            api_key=self._api_key, base_url=self.base_url, timeout=self.options.timeout_s, max_retries=0
        )
        return client

    def _api_key_env(self) -> str | None:
        return self.options.api_key_env or DEFAULT_KEY_ENV

    def _describe_extra(self) -> dict[str, Any]:
        return {
            "temperature_sent": self._takes_temperature,
            "temperature_rule": (
                "sent, except with extended thinking (Claude requires temperature 1 then)"
                if self._takes_temperature
                else f"not sent: the installed anthropic SDK ({self._sdk_version}) has no temperature parameter"
            ),
            "seed_sent": False,
            "sdk_version": self._sdk_version,
        }

    def _wire_options(self) -> dict[str, Any]:
        wire = super()._wire_options()
        if self._takes_temperature:  # SDKs without the parameter keep the keys they always had
            wire["temperature_sent"] = True
        return wire

    def _prepare(self, request: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        return messages_payload(
            request,
            model=self.model,
            extra_body=self.options.extra_body,
            takes_temperature=self._takes_temperature,
            sdk_version=self._sdk_version,
        )

    def _sent_for(self, payload: tuple[dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
        return payload[1]

    async def _send_once(self, payload: tuple[dict[str, Any], dict[str, Any]]) -> GenerateResponse:
        sdk = self._sdk
        try:
            async with asyncio.timeout(self.options.timeout_s):
                message = await self._client().messages.create(**payload[0])
        except (TimeoutError, sdk.APITimeoutError):
            raise AttemptFailure.timeout(f"no complete answer within {self.options.timeout_s} s") from None
        except sdk.APIStatusError as error:
            raise failure_for_status(error.status_code, error.response.headers, error.response.text) from None
        except sdk.APIConnectionError as error:
            raise AttemptFailure.network(
                f"{type(error).__name__}: {error}", unreachable=unreachable(error.__cause__)
            ) from None
        except (sdk.APIResponseValidationError, ValueError) as error:
            raise AttemptFailure.malformed(f"{type(error).__name__}: {error}") from None
        return parse_message(message, model=self.model)

    async def _close_client(self, client: anthropic.AsyncAnthropic) -> None:
        await client.close()
