"""OpenAI's Responses API (`POST /v1/responses`) as a backend: the models served only there, or any.

Chosen automatically for the models OpenAI serves only on the Responses API (`RESPONSES_ONLY`:
gpt-5-pro, o3-pro, o1-pro, the codex and deep-research models, computer-use-preview); selectable
for any model with the backend option `api` ("responses" or "chat"; `--api` on the command line).

Everything but the wire is the chat path's: the same retry loop, adaptive limiter and response
cache (`RemoteBackend`), the same parameter rules (`param_rules`: temperature, reasoning effort by
model) and the same 400-driven fallbacks (`param_fallback`, which knows `reasoning.effort` and
`reasoning.summary` too: an organisation not verified for reasoning summaries gets a 400 naming
`reasoning.summary`, and the request goes out again without it), the same multi-endpoint pool
(`openai:MODEL@URL1,URL2`), and the same record of what was sent in every prediction. The cache key
names the API ("openai-responses"), so an answer from one API is never served for the other.
"""

from __future__ import annotations

import re
from typing import Any

from expvid.models.multi_endpoint import MultiEndpointBackend
from expvid.models.openai_compat import OpenAICompatBackend
from expvid.models.param_rules import bare_model_name
from expvid.models.responses_wire import compose_responses_body, encode_input, parse_response
from expvid.models.types import BackendConfigError, GenerateResponse

#: Models OpenAI serves on /v1/responses only (chat completions answers them with a 404).
RESPONSES_ONLY = re.compile(
    r"^(o1-pro|o3-pro|gpt-5(\.\d+)?-pro|gpt-5(\.\d+)?-codex|codex-mini|o3-deep-research|"
    r"o4-mini-deep-research|computer-use-preview)(-|$)"
)
API_KINDS = ("chat", "responses")


def default_api(model: str) -> str:
    """ "responses" for a model served only on the Responses API, else "chat"."""
    return "responses" if RESPONSES_ONLY.match(bare_model_name(model)) else "chat"


def resolved_api(model: str, api: str | None) -> str:
    return api or default_api(model)


class ResponsesProtocol:
    """The Responses wire on top of an OpenAI-compatible backend (single or multi-endpoint)."""

    kind = "openai-responses"
    api_path = "/responses"
    encode_messages = staticmethod(encode_input)
    compose_body = staticmethod(compose_responses_body)

    model: str
    rules: Any
    options: Any

    def __init__(self, model: str, *args: Any, **kwargs: Any) -> None:
        options = kwargs.get("options")
        if options is not None and options.input_mode == "video":
            raise BackendConfigError(
                f"openai:{model} on the Responses API takes images, not videos; use --input-mode images"
            )
        super().__init__(model, *args, **kwargs)  # type: ignore[call-arg]

    def _parse_body(self, raw: bytes) -> GenerateResponse:
        return parse_response(raw, model=self.model)

    def input_modes(self) -> tuple[str, ...]:
        return ("images",)

    def _wire_options(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"extra_body": self.options.extra_body, "api": "responses"}
        wire["thinking_style"] = self.rules.thinking_style
        if self.options.image_detail is not None:
            wire["image_detail"] = self.options.image_detail
        if self.rules.temperature != "send":
            wire["temperature_rule"] = self.rules.temperature
        return wire


class OpenAIResponsesBackend(ResponsesProtocol, OpenAICompatBackend):
    """One server's `/v1/responses` (api.openai.com, Azure, or a compatible server)."""

    def _describe_extra(self) -> dict[str, Any]:
        return {**super()._describe_extra(), "api": "responses", "max_tokens_param": "max_output_tokens"}


class MultiEndpointResponsesBackend(ResponsesProtocol, MultiEndpointBackend):
    """Several servers' `/v1/responses` for one model (`openai:MODEL@URL1,URL2 --api responses`)."""

    def _describe_extra(self) -> dict[str, Any]:
        return {**super()._describe_extra(), "api": "responses", "max_tokens_param": "max_output_tokens"}
