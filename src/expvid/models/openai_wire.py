"""The OpenAI chat-completions wire format: request bodies out, completions in. Pure functions.

Kept apart from the HTTP client so that the loopback server and the tests can check the exact shape,
and so that parsing is strict: a body that is not a usable completion is an error, never an empty answer.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from expvid.models.options import ThinkingStyle
from expvid.models.retry import AttemptFailure
from expvid.models.types import GenerateRequest, GenerateResponse, ImagePart, Message, TextPart
from expvid.schema import Usage


def data_url(image: ImagePart) -> str:
    return f"data:{image.mime};base64,{base64.b64encode(image.data).decode('ascii')}"


def openai_content(message: Message) -> str | list[dict[str, Any]]:
    """Parts in message order; a message that is one text part is sent as a plain string.

    Plain strings keep text-only system prompts working with chat templates that reject part lists.
    """
    if len(message.content) == 1 and isinstance(message.content[0], TextPart):
        return message.content[0].text
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.text})
        else:
            parts.append({"type": "image_url", "image_url": {"url": data_url(part)}})
    return parts


def reasoning_effort(budget_tokens: int | None) -> str:
    """Map a token budget onto OpenAI's coarse effort levels."""
    if budget_tokens is None:
        return "medium"
    if budget_tokens <= 2048:
        return "low"
    if budget_tokens <= 16384:
        return "medium"
    return "high"


def chat_body(
    request: GenerateRequest,
    *,
    model: str,
    thinking_style: ThinkingStyle,
    max_tokens_param: str,
    extra_body: dict[str, Any] | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": openai_content(m)} for m in request.messages],
        "temperature": request.temperature,
        max_tokens_param: request.max_tokens,
    }
    if request.seed is not None:
        body["seed"] = request.seed
    thinking = request.thinking
    if thinking is not None and thinking_style == "chat_template_kwargs":
        enabled = thinking.enabled and thinking.budget_tokens != 0
        body["chat_template_kwargs"] = {"enable_thinking": enabled}
    elif thinking is not None and thinking_style == "reasoning_effort" and thinking.enabled:
        body["reasoning_effort"] = reasoning_effort(thinking.budget_tokens)
    if extra_body:
        body.update(extra_body)
    return body


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("completion_tokens_details")
    reasoning = _int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    return Usage(
        prompt_tokens=_int_or_none(raw.get("prompt_tokens")),
        completion_tokens=_int_or_none(raw.get("completion_tokens")),
        reasoning_tokens=reasoning,
    )


def _text(content: Any) -> str | None:
    """`content` is a string, null, or (some servers) a list of text parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and isinstance(p.get("text"), str) for p in content
    ):
        return "".join(p["text"] for p in content)
    raise AttemptFailure.malformed(f"message.content has unexpected type {type(content).__name__}")


def parse_chat_completion(raw: bytes, *, model: str) -> GenerateResponse:
    """Parse a chat.completion body, raising AttemptFailure.malformed for anything unusable."""
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        excerpt = raw[:120].decode("utf-8", errors="replace")
        raise AttemptFailure.malformed(f"body is not JSON: {excerpt!r}") from None
    if not isinstance(body, dict):
        raise AttemptFailure.malformed(f"body is a JSON {type(body).__name__}, not an object")
    if "error" in body and "choices" not in body:
        raise AttemptFailure.malformed(f"error in a 200 answer: {str(body['error'])[:300]}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise AttemptFailure.malformed("no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise AttemptFailure.malformed("choices[0].message is missing")
    text = _text(message.get("content"))
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")  # newer vLLM name for the same field
    if reasoning is not None and not isinstance(reasoning, str):
        raise AttemptFailure.malformed("reasoning field is not a string")
    if text is None and not reasoning:
        raise AttemptFailure.malformed("message.content is null and there is no reasoning")
    finish_reason = choice.get("finish_reason")
    return GenerateResponse(
        text=text,
        reasoning=reasoning or None,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        usage=_usage(body.get("usage")),
        model=body["model"] if isinstance(body.get("model"), str) else model,
    )
