"""Pull the JSON value out of a model reply, or say exactly why there is none.

Replies wrap JSON in many ways: bare, in a ```json fence, after a sentence of preamble, after a
`<think>` block (DeepSeek-R1, Qwen3), followed by an explanation. We take, in order: the whole reply
without reasoning; the first fenced block that parses; the first `{` or `[` from which a JSON value
decodes (trailing text ignored: the paper's own G.1.2 format ends with a stray `}`). A reply with no
JSON is a `MalformedReply`; when it reads like a refusal ("I can't help with that") the message says
so, because the retry feedback is then about the refusal rather than about syntax.
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_REFUSAL = re.compile(
    r"\b(?:I\s*(?:can(?:no|')t|cannot|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable|sorry))"
    r"|I\s+won't|sorry,|as an ai|I must decline|not able to (?:help|assist|comply))",
    re.IGNORECASE,
)
#: Non-JSON spellings of "nothing" that the paper's prompts ask for ("return { null }", "return **null**").
_NULL_REPLIES = frozenset({"null", "{null}", "{ null }", "none", "**null**", "`null`"})


class MalformedReply(ValueError):
    """The reply holds no usable JSON value; the message is written to be shown back to the model."""


def strip_reasoning(text: str) -> str:
    """The reply without `<think>...</think>` blocks (and without an unterminated one's opening part)."""
    text = _THINK.sub("", text)
    if "</think>" in text:
        text = text.split("</think>", 1)[1]
    return text.strip()


def looks_like_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text[:400]))


def extract_json(reply: str | None) -> Any:
    """The first JSON value in `reply` (None for an explicit null reply); `MalformedReply` otherwise."""
    if reply is None or not reply.strip():
        raise MalformedReply("the reply is empty")
    text = strip_reasoning(reply)
    if not text:
        raise MalformedReply("the reply holds only reasoning (nothing after the </think> block)")
    if text.strip().strip(".").lower() in _NULL_REPLIES:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block)
        except json.JSONDecodeError:
            continue
    decoder = json.JSONDecoder()
    first_error: json.JSONDecodeError | None = None
    for match in re.finditer(r"[\[{]", text):
        try:
            value, _end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError as error:
            first_error = first_error or error
            continue
        return value
    if looks_like_refusal(text):
        raise MalformedReply(f"the reply is a refusal, not the requested JSON: {_excerpt(text)!r}")
    if first_error is not None:
        raise MalformedReply(
            f"the JSON in the reply does not parse ({first_error.msg} at line {first_error.lineno} "
            f"column {first_error.colno})"
        )
    raise MalformedReply(f"the reply contains no JSON object or list: {_excerpt(text)!r}")


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
