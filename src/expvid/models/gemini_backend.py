"""Gemini through the official `google-genai` SDK (optional extra: pip install 'expvid[gemini]').

Imported lazily like the Anthropic SDK. The SDK's retries are switched off (one attempt per call) so
our retry loop, limiter and cache apply. `thinking_budget` maps the request's ThinkingConfig: 0 turns
thinking off, a positive number caps it, -1 (thinking on, no budget) lets the model decide; under
each model's known rules (`gemini_rules`: Gemini 2.5 Pro cannot turn thinking off, so its minimum
128 goes out, and budgets are kept in range) and what a 400 teaches about a model the rules do not
know, once per backend. What went out is recorded in every prediction (`sent`).

Gemini takes the temperature and the seed (both sent and recorded). A candidate stopped by the
provider's safety filters with no text, and a blocked prompt, are refusals: model answers recorded
with their reason and scored unparseable, never retried.
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from typing import Any

from expvid.models.gemini_rules import (
    BudgetChoice,
    LearnedThinking,
    choose_budget,
    gemini_thinking,
    learned_from,
)
from expvid.models.options import BackendOptions
from expvid.models.remote import RemoteBackend
from expvid.models.retry import AttemptFailure, failure_for_status, unreachable
from expvid.models.types import BackendConfigError, GenerateRequest, GenerateResponse, TextPart
from expvid.schema import Usage

#: Finish reasons that mean the provider refused to (go on) answer(ing).
REFUSAL_FINISH = frozenset(
    {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "IMAGE_SAFETY", "RECITATION"}
)

DEFAULT_KEY_ENV = "GEMINI_API_KEY"


def import_genai() -> tuple[Any, Any, Any]:
    try:
        from google import genai
        from google.genai import errors, types
    except ImportError:
        raise BackendConfigError(
            "the gemini backend needs the 'google-genai' package: pip install 'expvid[gemini]'"
        ) from None
    return genai, types, errors


@dataclass(frozen=True)
class PreparedGemini:
    """A request whose thinking budget is chosen per attempt (after what the server taught)."""

    request: GenerateRequest


def gemini_payload(
    request: GenerateRequest,
    *,
    model: str,
    types: Any,
    extra_body: dict[str, Any] | None,
    budget: BudgetChoice | None = None,
) -> dict[str, Any]:
    """Keyword arguments for `aio.models.generate_content`. System text goes to system_instruction.
    `budget` (from `gemini_rules`) replaces the plain mapping of the request's thinking setting."""
    system = [
        p.text for m in request.messages if m.role == "system" for p in m.content if isinstance(p, TextPart)
    ]
    contents = []
    for message in request.messages:
        if message.role == "system":
            continue
        parts = [
            types.Part(text=part.text)
            if isinstance(part, TextPart)
            else types.Part(inline_data=types.Blob(data=part.data, mime_type=part.mime))
            for part in message.content
        ]
        contents.append(types.Content(role="model" if message.role == "assistant" else "user", parts=parts))
    config: dict[str, Any] = {
        "temperature": request.temperature,
        "max_output_tokens": request.max_tokens,
    }
    if system:
        config["system_instruction"] = "\n\n".join(system)
    if request.seed is not None:
        config["seed"] = request.seed
    thinking = request.thinking
    if thinking is not None:
        chosen = budget if budget is not None else choose_budget(thinking, None, model)
        if chosen.budget == 0:
            config["thinking_config"] = types.ThinkingConfig(thinking_budget=0)
        elif chosen.budget is not None:
            config["thinking_config"] = types.ThinkingConfig(
                thinking_budget=chosen.budget, include_thoughts=True
            )
    if request.response_schema is not None:  # Gemini's structured output: a JSON reply to this schema
        config["response_mime_type"] = "application/json"
        config["response_json_schema"] = request.response_schema.json_schema
    if extra_body:
        config["http_options"] = types.HttpOptions(extra_body=dict(extra_body))
    return {"model": model, "contents": contents, "config": types.GenerateContentConfig(**config)}


def _finish_reason(candidate: Any) -> str | None:
    reason = getattr(candidate, "finish_reason", None)
    if reason is None:
        return None
    return str(getattr(reason, "value", reason))


def parse_generate_content(response: Any, *, model: str) -> GenerateResponse:
    candidates = getattr(response, "candidates", None) or []
    if not candidates:
        feedback = getattr(response, "prompt_feedback", None)
        blocked = getattr(feedback, "block_reason", None)
        if blocked is not None:
            # Blocking is deterministic and the provider's decision on this item: a refusal.
            reason = getattr(blocked, "value", blocked)
            return GenerateResponse(
                text="", refusal=f"prompt blocked ({reason})", finish_reason="blocked", model=model
            )
        raise AttemptFailure.malformed("no candidates")
    candidate = candidates[0]
    texts: list[str] = []
    thoughts: list[str] = []
    content = getattr(candidate, "content", None)
    for part in getattr(content, "parts", None) or []:
        text = getattr(part, "text", None)
        if text is None:
            continue
        (thoughts if getattr(part, "thought", None) else texts).append(text)
    finish_reason = _finish_reason(candidate)
    if finish_reason in REFUSAL_FINISH:
        refusal = "".join(texts).strip() or f"finish reason {finish_reason}"
        return GenerateResponse(text="", refusal=refusal, finish_reason=finish_reason, model=model)
    if not texts and not thoughts:
        raise AttemptFailure.malformed(f"candidate has no text (finish reason {finish_reason})")
    usage = getattr(response, "usage_metadata", None)
    return GenerateResponse(
        text="".join(texts) if texts else None,
        reasoning="".join(thoughts) if thoughts else None,
        finish_reason=finish_reason,
        usage=Usage(
            prompt_tokens=getattr(usage, "prompt_token_count", None),
            completion_tokens=getattr(usage, "candidates_token_count", None),
            reasoning_tokens=getattr(usage, "thoughts_token_count", None),
            cache_read_tokens=getattr(usage, "cached_content_token_count", None),
        ),
        model=getattr(response, "model_version", None) or model,
    )


def transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout errors, network errors), asyncio's included, of the HTTP stacks google-genai may use.

    Depending on its version and on what is installed it sends through httpx, httpx2 or aiohttp.
    """
    timeouts: list[type[BaseException]] = []
    network: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        network.append(module.TransportError)
    try:
        aiohttp = importlib.import_module("aiohttp")
    except ImportError:
        pass
    else:
        network.append(aiohttp.ClientError)
    return (TimeoutError, *timeouts), tuple(network)


class GeminiBackend(RemoteBackend):
    kind = "gemini"

    def __init__(self, model: str, *, base_url: str | None, api_key: str, options: BackendOptions) -> None:
        if options.input_mode == "video":
            raise BackendConfigError(
                f"gemini:{model}: expvid sends Gemini the sampled frames as images; use --input-mode images"
            )
        self._genai, self._types, self._errors = import_genai()
        super().__init__(model, base_url=base_url, options=options)
        self._api_key = api_key
        self._transport_errors = transport_errors()
        #: The model's known thinking rules (None: unknown), and what its 400s taught.
        self.thinking_rules = gemini_thinking(model)
        self.learned = LearnedThinking()

    def _new_client(self) -> Any:
        http_options = self._types.HttpOptions(
            base_url=self.base_url,
            timeout=int(self.options.timeout_s * 1000),
            retry_options=self._types.HttpRetryOptions(attempts=1),
        )
        return self._genai.Client(api_key=self._api_key, http_options=http_options)

    def _api_key_env(self) -> str | None:
        return self.options.api_key_env or DEFAULT_KEY_ENV

    @property
    def reasoning_model(self) -> bool:
        """Gemini 2.5 Pro and Flash think by default (their thoughts count toward the output limit)."""
        rules = self.thinking_rules
        return (
            rules is not None and rules.budget_range is not None and rules.family != "gemini-2.5-flash-lite"
        )

    def _describe_extra(self) -> dict[str, Any]:
        return {
            "thinking_rules": None if self.thinking_rules is None else self.thinking_rules.describe(),
            "thinking_learned": self.learned.describe(),
        }

    def _prepare(self, request: GenerateRequest) -> PreparedGemini:
        return PreparedGemini(request)

    def _compose(self, prepared: PreparedGemini) -> tuple[dict[str, Any], dict[str, Any]]:
        """The payload for one attempt and what it sends (thinking as the rules and 400s say)."""
        request = prepared.request
        budget = None
        if request.thinking is not None:
            budget = self.learned.adjust(choose_budget(request.thinking, self.thinking_rules, self.model))
        payload = gemini_payload(
            request, model=self.model, types=self._types, extra_body=self.options.extra_body, budget=budget
        )
        sent = self._sent_for(payload)
        if budget is not None and budget.reason is not None:
            sent["not_sent"] = {"thinking": budget.reason}
        return payload, sent

    def _sent_for(self, payload: Any) -> dict[str, Any]:
        if isinstance(payload, PreparedGemini):
            return self._compose(payload)[1]
        config = payload["config"]
        budget = getattr(getattr(config, "thinking_config", None), "thinking_budget", None)
        sent: dict[str, Any] = {
            "temperature": config.temperature,
            "token_limit_field": "max_output_tokens",
            "max_tokens": config.max_output_tokens,
            "seed": config.seed,
            "input_mode": "images",
        }
        if budget is not None:
            sent["thinking_budget"] = budget
        if getattr(config, "response_json_schema", None) is not None:
            sent["response_format"] = "json_schema"
        return sent

    async def _send_once(self, payload: PreparedGemini) -> GenerateResponse:
        """One attempt; a 400 about the thinking budget is learned from and answered at once, as
        long as the lesson changes what is sent (else the server's own error is final)."""
        timeouts, transport_errors = self._transport_errors
        resends = 0
        while True:
            body, sent = self._compose(payload)
            try:
                async with asyncio.timeout(self.options.timeout_s):
                    response = await self._client().aio.models.generate_content(**body)
            except timeouts:
                raise AttemptFailure.timeout(
                    f"no complete answer within {self.options.timeout_s} s", sent=sent
                ) from None
            except self._errors.APIError as error:
                message = str(error.message or error)
                lesson = learned_from(message) if int(error.code or 0) == 400 else None
                if lesson is not None and payload.request.thinking is not None and resends < 3:
                    self.learned.learn(lesson, message)  # (another request may have learned it first)
                    if self._compose(payload)[1].get("thinking_budget") != sent.get("thinking_budget"):
                        resends += 1
                        self._counters.param_fallbacks += 1
                        continue
                http_response = getattr(error, "response", None)
                headers = getattr(http_response, "headers", None) or {}
                failure = failure_for_status(int(error.code or 0), headers, message)
                failure.sent = sent
                raise failure from None
            except transport_errors as error:
                raise AttemptFailure.network(
                    f"{type(error).__name__}: {error}", sent=sent, unreachable=unreachable(error)
                ) from None
            except ValueError as error:  # pydantic / JSON errors from a body that is not a response
                raise AttemptFailure.malformed(f"{type(error).__name__}: {error}") from None
            parsed = parse_generate_content(response, model=self.model)
            return parsed.model_copy(update={"sent": sent})

    async def _close_client(self, client: Any) -> None:
        await client.aio.aclose()
