"""Providers' parameter rules, answered the way the real APIs answer them: HTTP 400 and their bodies.

A rule is a callable `RecordedRequest -> Rejection | None`; `LoopbackServer(rules=[...])` applies
them in order after a request's shape is validated. They make the loopback server behave like a
reasoning model's endpoint, so a backend is tested against the exact error it will meet:

- `OpenAIReasoningRules()`: OpenAI o-series / gpt-5 family. `max_tokens` ->
  400 `unsupported_parameter` ("... Use 'max_completion_tokens' instead."); a temperature other than
  1 -> 400 `unsupported_value` ("... Only the default (1) value is supported.", or o3-mini's
  `unsupported_parameter` form); `top_p`, penalties, logprobs -> `unsupported_parameter`; a
  `reasoning_effort` outside the model's levels -> `unsupported_value` listing them; a `video_url`
  part -> `invalid_value` (OpenAI's chat API takes no video). Bodies and wording as the API sends
  them (quoted in many public issue reports).
- `OpenAIChatRules()`: OpenAI's non-reasoning chat models: no video, unknown arguments refused.
- `GeminiThinkingRules()`: a Gemini thinking model's budget rules (2.5 Pro by default: 128-32768
  or -1, never 0): budget 0 -> 400 INVALID_ARGUMENT "Budget 0 is invalid. This model only works in
  thinking mode.", a budget out of range -> "The thinking budget (N) is invalid." (the API's words).
- `OpenAIResponsesRules()`: the same for `/v1/responses` (temperature, `reasoning.effort` values,
  reasoning summaries for unverified organisations, unknown fields), and `ResponsesOnlyModels`:
  chat completions answering 404 for models served only on the Responses API.
- `AnthropicRules()`: at most 100 images per request ("Too much media: 0 document pages + 101
  images > 100"), temperature within 0..1 and only 1 while extended thinking is on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, ClassVar

from expvid.fakes.models.request_shapes import RecordedRequest


@dataclass(frozen=True)
class Rejection:
    status: int
    body: dict[str, Any]


Rule = Callable[[RecordedRequest], "Rejection | None"]


def openai_error(message: str, *, param: str | None, code: str | None) -> Rejection:
    return Rejection(
        400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    )


def unsupported_parameter(name: str, advice: str = "") -> Rejection:
    """OpenAI's 400 for a parameter the model does not take (`advice`: a sentence that follows)."""
    message = f"Unsupported parameter: '{name}' is not supported with this model.{advice}"
    return openai_error(message, param=name, code="unsupported_parameter")


def effort_refused(effort: Any, efforts: tuple[str, ...], name: str) -> Rejection | None:
    """OpenAI's 400 for a reasoning effort the model does not have (None: it has it, or none is sent)."""
    if effort is None or effort in efforts:
        return None
    return openai_error(
        f"Unsupported value: '{name}' does not support '{effort}' with this model. "
        f"Supported values are: {_listing(efforts)}.",
        param=name,
        code="unsupported_value",
    )


def gemini_error(message: str) -> Rejection:
    return Rejection(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})


def anthropic_error(message: str) -> Rejection:
    return Rejection(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})


def _json_number(value: Any) -> str:
    """A number as the API quotes it back (as it was written in the request's JSON)."""
    return json.dumps(value)


def _listing(values: Collection[str]) -> str:
    quoted = [f"'{v}'" for v in values]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


@dataclass(kw_only=True, eq=False)
class ProtocolRules:
    """Rules for the requests of one `protocol`, to every model or only to `models`: `check` says
    why a request they apply to is refused (None: it is not)."""

    protocol: ClassVar[str]
    models: Collection[str] | None = None

    def __post_init__(self) -> None:
        if self.models is not None:
            self.models = frozenset(self.models)

    def __call__(self, record: RecordedRequest) -> Rejection | None:
        if record.protocol != self.protocol or (self.models is not None and record.model not in self.models):
            return None
        return self.check(record)

    def check(self, record: RecordedRequest) -> Rejection | None:
        raise NotImplementedError


@dataclass(kw_only=True, eq=False)
class OpenAIReasoningRules(ProtocolRules):
    """The chat-completions parameter rules of an OpenAI reasoning model (o-series, gpt-5)."""

    protocol = "openai"
    efforts: tuple[str, ...] = ("minimal", "low", "medium", "high")
    temperature_error: str = "unsupported_value"

    def check(self, record: RecordedRequest) -> Rejection | None:
        body = record.body
        if "max_tokens" in body:
            return unsupported_parameter("max_tokens", " Use 'max_completion_tokens' instead.")
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            if self.temperature_error == "unsupported_parameter":
                return unsupported_parameter("temperature")
            return openai_error(
                f"Unsupported value: 'temperature' does not support {_json_number(temperature)} with this "
                "model. Only the default (1) value is supported.",
                param="temperature",
                code="unsupported_value",
            )
        for name in ("top_p", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs"):
            if name in body:
                return unsupported_parameter(name)
        return (
            effort_refused(body.get("reasoning_effort"), self.efforts, "reasoning_effort")
            or _no_video(record)
            or _unknown_arguments(record)
        )


@dataclass(kw_only=True, eq=False)
class OpenAIChatRules(ProtocolRules):
    """OpenAI's non-reasoning chat models: the classic parameters, but no video and no extras."""

    protocol = "openai"

    def check(self, record: RecordedRequest) -> Rejection | None:
        return _no_video(record) or _unknown_arguments(record)


#: Request fields OpenAI's chat completions API knows (others: "Unrecognized request argument").
OPENAI_FIELDS = frozenset(
    {
        "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "stop",
        "seed", "stream", "stream_options", "presence_penalty", "frequency_penalty", "logit_bias",
        "logprobs", "top_logprobs", "user", "response_format", "tools", "tool_choice",
        "parallel_tool_calls", "reasoning_effort", "service_tier", "store", "metadata", "modalities",
        "audio", "prediction", "verbosity", "web_search_options", "prompt_cache_key", "safety_identifier",
    }
)  # fmt: skip


def _unknown_arguments(record: RecordedRequest) -> Rejection | None:
    unknown = sorted(set(record.body) - OPENAI_FIELDS)
    if not unknown:
        return None
    return openai_error(f"Unrecognized request argument supplied: {unknown[0]}", param=None, code=None)


def _no_video(record: RecordedRequest) -> Rejection | None:
    for i, message in enumerate(record.body.get("messages", [])):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "video_url":
                return openai_error(
                    f"Invalid value: '{kind}'. Supported values are: 'text', 'image_url', 'input_audio', "
                    "'refusal', 'audio', and 'file'.",
                    param=f"messages[{i}].content[{j}].type",
                    code="invalid_value",
                )
    return None


#: Request fields the Responses API knows (others: 400 "Unknown parameter: 'x'.", code unknown_parameter).
RESPONSES_FIELDS = frozenset(
    {
        "model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "reasoning",
        "store", "metadata", "stream", "stream_options", "tools", "tool_choice", "parallel_tool_calls",
        "previous_response_id", "conversation", "include", "text", "truncation", "user", "service_tier",
        "background", "prompt", "prompt_cache_key", "safety_identifier", "max_tool_calls", "top_logprobs",
    }
)  # fmt: skip


@dataclass(kw_only=True, eq=False)
class OpenAIResponsesRules(ProtocolRules):
    """The Responses API's parameter rules for one kind of model.

    Reasoning models (`reasoning=True`: o-series, gpt-5 family): `temperature` / `top_p` ->
    400 unsupported_parameter; `reasoning.effort` outside `efforts` -> unsupported_value listing
    them; `reasoning.summary` while the organisation is not verified (`verified=False`) -> the 400
    OpenAI sends ("Your organization must be verified to generate reasoning summaries ...").
    Other models: any `reasoning` -> unsupported_parameter `reasoning.effort`. Everyone: unknown
    fields (`max_tokens`, `seed`) -> 400 unknown_parameter.
    """

    protocol = "openai-responses"
    reasoning: bool = True
    efforts: tuple[str, ...] = ("minimal", "low", "medium", "high")
    verified: bool = True

    def check(self, record: RecordedRequest) -> Rejection | None:
        body = record.body
        unknown = sorted(set(body) - RESPONSES_FIELDS)
        if unknown:
            return Rejection(
                400,
                {"error": {"message": f"Unknown parameter: '{unknown[0]}'.", "type": "invalid_request_error",
                           "param": unknown[0], "code": "unknown_parameter"}},
            )  # fmt: skip
        reasoning = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else None
        if not self.reasoning:
            if reasoning:
                return unsupported_parameter("reasoning.effort")
            return None
        for name in ("temperature", "top_p"):
            if name in body:
                return unsupported_parameter(name)
        refused = effort_refused((reasoning or {}).get("effort"), self.efforts, "reasoning.effort")
        if refused is not None:
            return refused
        if (reasoning or {}).get("summary") is not None and not self.verified:
            return openai_error(
                "Your organization must be verified to generate reasoning summaries. Please go to: "
                "https://platform.openai.com/settings/organization/general and click on Verify Organization. "
                "If you just verified, it can take up to 15 minutes for access to propagate.",
                param="reasoning.summary",
                code="unsupported_value",
            )
        return None


class ResponsesOnlyModels:
    """Chat completions refusing the models OpenAI serves only on /v1/responses (HTTP 404)."""

    def __init__(self, models: Collection[str]) -> None:
        self.models = frozenset(models)

    def __call__(self, record: RecordedRequest) -> Rejection | None:
        if record.protocol != "openai" or record.model not in self.models:
            return None
        return Rejection(
            404,
            {"error": {"message": "This model is only supported in v1/responses and not in v1/chat/completions.",
                       "type": "invalid_request_error", "param": "model", "code": None}},
        )  # fmt: skip


@dataclass(kw_only=True, eq=False)
class AnthropicRules(ProtocolRules):
    """Claude's Messages API limits: images per request, temperature range, thinking temperature."""

    protocol = "anthropic"
    max_images: int = 100

    def check(self, record: RecordedRequest) -> Rejection | None:
        if record.n_images > self.max_images:
            return anthropic_error(
                f"Too much media: 0 document pages + {record.n_images} images > {self.max_images}"
            )
        temperature = record.body.get("temperature")
        if temperature is not None:
            if not isinstance(temperature, int | float) or not 0 <= temperature <= 1:
                return anthropic_error("temperature: range: 0..1")
            thinking = record.body.get("thinking")
            if isinstance(thinking, dict) and thinking.get("type") == "enabled" and temperature != 1:
                return anthropic_error(
                    "`temperature` may only be set to 1 when thinking is enabled. Please consult our "
                    "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                    "#important-considerations-when-using-extended-thinking"
                )
        return None


@dataclass(kw_only=True, eq=False)
class GeminiThinkingRules(ProtocolRules):
    """The thinking-budget rules of a Gemini model, answered as the Gemini API answers them."""

    protocol = "gemini"
    budget_range: tuple[int, int] = (128, 32768)
    can_disable: bool = False

    def check(self, record: RecordedRequest) -> Rejection | None:
        config = record.body.get("generationConfig") or {}
        thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
        budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))
        if budget is None or budget == -1:
            return None
        if budget == 0:
            if self.can_disable:
                return None
            return gemini_error("Budget 0 is invalid. This model only works in thinking mode.")
        low, high = self.budget_range
        if not low <= budget <= high:
            return gemini_error(f"The thinking budget ({budget}) is invalid.")
        return None
