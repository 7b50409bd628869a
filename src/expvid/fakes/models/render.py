"""Render a protocol-neutral `Reply` as each API's JSON (success and error bodies), or as a dropped connection."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from expvid.fakes.models.replies import Reply, usage_for

ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens"}
GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS"}
ANTHROPIC_ERROR_TYPE = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def openai_completion(reply: Reply, model: str) -> dict[str, Any]:
    usage = usage_for(reply)
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    if reply.reasoning is not None:
        message["reasoning_content"] = reply.reasoning
    completion_usage: dict[str, Any] = {
        "prompt_tokens": usage["prompt"],
        "completion_tokens": usage["completion"],
        "total_tokens": usage["prompt"] + usage["completion"],
        "prompt_tokens_details": {"cached_tokens": usage["cached"] or 0, "audio_tokens": 0},
    }
    if usage["reasoning"] is not None:
        completion_usage["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning"]}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
        "usage": completion_usage,
    }


def openai_response(reply: Reply, model: str) -> dict[str, Any]:
    """A Response object of `/v1/responses` (reasoning summary item, message item, usage)."""
    usage = usage_for(reply)
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        output.append(
            {
                "id": f"rs_{uuid.uuid4().hex[:24]}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
            }
        )
    content: list[dict[str, Any]] = []
    if reply.refusal is not None:
        content.append({"type": "refusal", "refusal": reply.refusal})
    elif reply.text is not None:
        content.append({"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []})
    if content:
        output.append(
            {
                "id": f"msg_{uuid.uuid4().hex[:24]}",
                "type": "message",
                "status": "incomplete" if reply.finish_reason == "length" else "completed",
                "role": "assistant",
                "content": content,
            }
        )
    cut = reply.finish_reason == "length"
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if cut else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
        "model": model,
        "output": output,
        "usage": {
            "input_tokens": usage["prompt"],
            "input_tokens_details": {"cached_tokens": usage["cached"] or 0},
            "output_tokens": usage["completion"],
            "output_tokens_details": {"reasoning_tokens": usage["reasoning"] or 0},
            "total_tokens": usage["prompt"] + usage["completion"],
        },
    }


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    usage = usage_for(reply)
    content: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "loopback"})
    if reply.text is not None:
        content.append({"type": "text", "text": reply.text})
    output_usage: dict[str, Any] = {"input_tokens": usage["prompt"], "output_tokens": usage["completion"]}
    if usage["reasoning"] is not None:
        output_usage["output_tokens_details"] = {"thinking_tokens": usage["reasoning"]}
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "refusal"
        if reply.refusal is not None
        else ANTHROPIC_STOP.get(reply.finish_reason, reply.finish_reason),
        "stop_sequence": None,
        "usage": output_usage,
    }


def gemini_response(reply: Reply, model: str) -> dict[str, Any]:
    usage = usage_for(reply)
    parts: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        parts.append({"text": reply.reasoning, "thought": True})
    if reply.text is not None:
        parts.append({"text": reply.text})
    metadata: dict[str, Any] = {
        "promptTokenCount": usage["prompt"],
        "candidatesTokenCount": usage["completion"],
        "totalTokenCount": usage["prompt"] + usage["completion"] + (usage["reasoning"] or 0),
    }
    if usage["reasoning"] is not None:
        metadata["thoughtsTokenCount"] = usage["reasoning"]
    if usage["cached"]:
        metadata["cachedContentTokenCount"] = usage["cached"]
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "SAFETY"
                if reply.refusal is not None
                else GEMINI_FINISH.get(reply.finish_reason, reply.finish_reason),
                "index": 0,
            }
        ],
        "usageMetadata": metadata,
        "modelVersion": model,
    }


def error_body(protocol: str, status: int, message: str) -> dict[str, Any]:
    if protocol == "anthropic":
        kind = ANTHROPIC_ERROR_TYPE.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == "gemini":
        return {"error": {"code": status, "message": message, "status": GEMINI_STATUS.get(status, "UNKNOWN")}}
    kind = "invalid_request_error" if 400 <= status < 500 else "server_error"
    if protocol == "openai-responses":
        code = "server_error" if status >= 500 else ("rate_limit_exceeded" if status == 429 else None)
        return {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return {"error": {"message": message, "type": kind, "code": status}}


def success_body(protocol: str, reply: Reply, model: str) -> dict[str, Any]:
    if protocol == "anthropic":
        return anthropic_message(reply, model)
    if protocol == "gemini":
        return gemini_response(reply, model)
    if protocol == "openai-responses":
        return openai_response(reply, model)
    return openai_completion(reply, model)


class DeliberateDrop(Exception):
    """Raised after the response has started, so uvicorn closes the connection mid-answer."""


class _DropFilter(logging.Filter):
    """Keeps uvicorn from logging our deliberate drops as application crashes."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DeliberateDrop)


_drop_filter = _DropFilter()
logging.getLogger("uvicorn.error").addFilter(_drop_filter)


class DroppedResponse(Response):
    """Announces a body, then hangs up before sending it: what a crashing proxy looks like."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"1024")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        raise DeliberateDrop("loopback dropped the connection on purpose")
