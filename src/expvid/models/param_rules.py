"""What an OpenAI-compatible chat model accepts, as far as it is known before the first request.

The providers' reasoning models break the classic chat-completions parameters, and a harness that
sends them "as usual" fails on every item (HTTP 400) or, worse, records a setting that was ignored:

- OpenAI o-series (o1, o3, o4-mini, ...) and the gpt-5 family (gpt-5, -mini, -nano, -pro, -codex)
  reject `max_tokens` ("Unsupported parameter: 'max_tokens' is not supported with this model. Use
  'max_completion_tokens' instead.", code `unsupported_parameter`) and any temperature but the
  default ("Unsupported value: 'temperature' does not support 0.1 with this model. Only the default
  (1) value is supported.", code `unsupported_value`; o3-mini says `unsupported_parameter`), and
  `top_p` likewise. Reasoning depth is `reasoning_effort`: o-series low / medium / high; gpt-5
  minimal / low / medium / high. gpt-5.1 and later default to effort "none", where temperature is
  accepted; with any other effort it is not. Every current OpenAI chat model takes
  `max_completion_tokens` (`max_tokens` is deprecated), so api.openai.com always gets that field.
- DeepSeek's hosted `deepseek-reasoner` accepts temperature / top_p but ignores them (its API guide
  lists them as "not supported, no effect"): sending 0.1 would record a setting that never applied,
  so it is not sent.
- Anthropic (extended thinking requires temperature 1) and Gemini have their own backends, with
  their rules there.

These rules only avoid a first, predictable 400. Anything they do not know (a new model, a proxy
with its own rules) is learned from the server's own 400 by `param_fallback`, once per endpoint.
Explicit backend options (`max_tokens_param`, `thinking_style`, `send_temperature`) always win.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import urlparse

from expvid.models.options import BackendOptions, ThinkingStyle
from expvid.models.types import field_values

TokenField = Literal["max_tokens", "max_completion_tokens"]
#: "send": always; "omit": never (with `temperature_reason`); "omit_with_reasoning": only while no
#: reasoning effort other than "none" is sent (gpt-5.1 and later).
TemperatureRule = Literal["send", "omit", "omit_with_reasoning"]

_O_SERIES = re.compile(r"^o[1-9](-|$)")
_GPT5_ORIGINAL = re.compile(r"^gpt-5(-mini|-nano|-pro|-codex)?(-\d{4}-\d{2}-\d{2})?$")
_GPT5_POINT = re.compile(r"^gpt-5\.\d+")
OPENAI_HOSTS = ("api.openai.com",)
AZURE_SUFFIX = ".openai.azure.com"

#: Families whose models reason on every request by default.
REASONING_FAMILIES = frozenset({"openai-o-series", "openai-gpt-5", "deepseek-reasoner"})
#: Every effort level OpenAI has named, weakest first (used to pick the nearest accepted one).
EFFORT_ORDER = ("none", "minimal", "low", "medium", "high", "xhigh")


@dataclass(frozen=True)
class ChatRules:
    """How to phrase a request for one model on one kind of server."""

    family: (
        str  # "openai-o-series", "openai-gpt-5", "openai-gpt-5.x", "openai", "deepseek-reasoner", "generic"
    )
    token_limit_field: TokenField = "max_tokens"
    temperature: TemperatureRule = "send"
    temperature_reason: str | None = None
    thinking_style: ThinkingStyle = "chat_template_kwargs"
    #: Effort levels the model accepts, weakest first; None: unknown (send what is asked).
    reasoning_efforts: tuple[str, ...] | None = None
    #: Whether the server can take frames as one video (vLLM's `video_url`); OpenAI's API cannot.
    accepts_video: bool = True

    @property
    def reasons_by_default(self) -> bool:
        """The model spends completion tokens on hidden reasoning unless told otherwise (o-series,
        gpt-5, deepseek-reasoner): a short token budget (a judge's 20-1,024) leaves no room for the
        answer. gpt-5.1 and later default to effort "none", so they do not."""
        return self.family in REASONING_FAMILIES

    def describe(self) -> dict[str, object]:
        return field_values(self, leave_out={"accepts_video"})


def bare_model_name(model: str) -> str:
    """'openai/gpt-5' (a gateway's name) -> 'gpt-5'; names are compared in lower case."""
    return model.strip().lower().rsplit("/", 1)[-1]


def is_openai_host(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = (urlparse(base_url.split(",")[0]).hostname or "").lower()
    return host in OPENAI_HOSTS or host.endswith(AZURE_SUFFIX)


def _known(model: str, base_url: str | None) -> ChatRules:
    name = bare_model_name(model)
    openai_host = is_openai_host(base_url)
    only_default = "OpenAI reasoning models accept only the default temperature (1)"
    if _O_SERIES.match(name):
        efforts: tuple[str, ...] | None = None if name.startswith("o1-mini") else ("low", "medium", "high")
        return ChatRules(
            "openai-o-series",
            "max_completion_tokens",
            "omit",
            only_default,
            "reasoning_effort",
            efforts,
            False,
        )
    if "chat" not in name and _GPT5_ORIGINAL.match(name):
        efforts = ("high",) if name.startswith("gpt-5-pro") else ("minimal", "low", "medium", "high")
        return ChatRules(
            "openai-gpt-5", "max_completion_tokens", "omit", only_default, "reasoning_effort", efforts, False
        )
    if "chat" not in name and _GPT5_POINT.match(name):
        reason = "gpt-5.1 and later accept a temperature only with reasoning effort 'none'"
        return ChatRules(
            "openai-gpt-5.x", "max_completion_tokens", "omit_with_reasoning", reason, "reasoning_effort",
            None, False,
        )  # fmt: skip
    if name == "deepseek-reasoner":
        reason = "deepseek-reasoner accepts temperature but ignores it (DeepSeek API guide)"
        return ChatRules("deepseek-reasoner", "max_tokens", "omit", reason, "none")
    if openai_host:
        return ChatRules("openai", "max_completion_tokens", accepts_video=False)
    return ChatRules("generic")


def chat_rules(model: str, base_url: str | None, options: BackendOptions) -> ChatRules:
    """The rules for `model` at `base_url`, with the user's explicit options on top."""
    rules = _known(model, base_url)
    updates: dict[str, object] = {}
    if options.max_tokens_param is not None:
        updates["token_limit_field"] = options.max_tokens_param
    if options.thinking_style is not None:
        updates["thinking_style"] = options.thinking_style
    if options.send_temperature is True:
        updates.update(temperature="send", temperature_reason=None)
    elif options.send_temperature is False:
        updates.update(temperature="omit", temperature_reason="send_temperature=false (backend option)")
    return replace(rules, **updates) if updates else rules  # type: ignore[arg-type]


def effort_for(budget_tokens: int | None, enabled: bool, accepted: tuple[str, ...] | None) -> str | None:
    """The reasoning effort for a thinking setting, moved to the nearest level the model accepts.

    Thinking on maps a token budget onto low / medium / high (none given: medium); thinking off asks
    for the weakest level the model has ("minimal" on gpt-5, "none" on gpt-5.1+), or sends nothing
    when that is unknown (the model's default then applies, and is recorded as such).
    """
    if not enabled or budget_tokens == 0:
        if accepted is None:
            return None
        return accepted[0] if accepted[0] in ("none", "minimal") else None
    if budget_tokens is None:
        wanted = "medium"
    elif budget_tokens <= 2048:
        wanted = "low"
    elif budget_tokens <= 16384:
        wanted = "medium"
    else:
        wanted = "high"
    return nearest_effort(wanted, accepted)


def nearest_effort(wanted: str, accepted: tuple[str, ...] | None) -> str:
    """`wanted` if accepted, else the accepted level closest to it (ties: the stronger one)."""
    if not accepted or wanted in accepted:
        return wanted
    rank = {level: i for i, level in enumerate(EFFORT_ORDER)}
    target = rank.get(wanted, rank["medium"])
    known = [level for level in accepted if level in rank]
    if not known:
        return accepted[0]
    return min(known, key=lambda level: (abs(rank[level] - target), -rank[level]))


#: Backend options that only say how a request is phrased; their resolved effect is compared on
#: resume (`resolved_phrasing`), not the options as given.
PHRASING_OPTIONS = ("send_temperature", "max_tokens_param", "thinking_style")


def resolved_phrasing(spec: str, options: BackendOptions, thinking_enabled: bool | None) -> dict[str, object]:
    """How the backend of `spec` will phrase every request, as the rules resolve it before the first
    one: whether the temperature is sent, the token-limit field, the thinking style. The same for
    `send_temperature=true` given explicitly and for a model whose rules send it anyway, so a resume
    compares what is sent, not how it was asked for. Empty for backends these options do not drive.
    """
    import os

    from expvid.models.spec import split_spec

    kind, model, url = split_spec(spec)
    if kind not in ("openai", "vllm"):
        return {}
    base_url: str | None = None
    if kind == "openai":
        listed = options.base_urls[0] if options.base_urls else None
        base_url = url or options.base_url or listed or os.environ.get("OPENAI_BASE_URL")
        base_url = base_url or "https://api.openai.com/v1"
    rules = chat_rules(model, base_url, options)
    if rules.temperature == "send":
        temperature_sent = True
    elif rules.temperature == "omit":
        temperature_sent = False
    else:  # gpt-5.1+: only while no reasoning effort but "none" goes out
        temperature_sent = not bool(thinking_enabled)
    return {
        "temperature_sent": temperature_sent,
        "token_limit_field": rules.token_limit_field,
        "thinking_style": rules.thinking_style,
    }
