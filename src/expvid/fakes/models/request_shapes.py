"""Requests as the loopback server sees them: validated, images decoded, recorded for tests to inspect.

Validation is deliberately strict (the shapes real servers require), so a backend that sends a
malformed message, a broken data URL or an image that does not decode fails here, not in production.
"""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PIL import Image, UnidentifiedImageError

#: Message roles of OpenAI's Chat Completions and Responses APIs.
ROLES = frozenset({"system", "user", "assistant", "developer"})
FORMAT_MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp", "GIF": "image/gif"}


class RequestShapeError(ValueError):
    """The request body does not have the shape the protocol requires (answered with HTTP 400)."""


@dataclass
class RecordedRequest:
    protocol: str  # "openai" | "openai-responses" | "anthropic" | "gemini"
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    model: str
    #: Text parts in order across all messages, system prompt first.
    texts: list[str] = field(default_factory=list)
    #: Decoded image bytes in the order they appeared.
    images: list[bytes] = field(default_factory=list)
    image_mimes: list[str] = field(default_factory=list)
    #: OpenAI's `detail` of each image ("auto" when not sent; other protocols have none).
    image_details: list[str] = field(default_factory=list)
    #: Videos sent as frame sequences (vLLM's `video_url` with a `video/jpeg` data URL): decoded
    #: JPEG frames of each video, in order.
    videos: list[list[bytes]] = field(default_factory=list)
    #: Message roles in order ("system" included when sent as a message or a system field).
    roles: list[str] = field(default_factory=list)
    index: int = 0
    received_at: float = 0.0
    #: "online", or the batch id whose line this request was ("batch_..." / "msgbatch_...").
    via: str = "online"

    @property
    def n_images(self) -> int:
        return len(self.images)

    @property
    def api_key(self) -> str | None:
        """The credential as each protocol sends it: Bearer token, x-api-key or x-goog-api-key."""
        authorization = self.headers.get("authorization", "")
        if authorization.lower().startswith("bearer "):
            return authorization[7:]
        return self.headers.get("x-api-key") or self.headers.get("x-goog-api-key")


def decode_image(data: str, mime: str, where: str, *, urlsafe_ok: bool = False) -> bytes:
    """Decode and verify one image. Gemini's proto3 JSON also accepts the URL-safe base64 alphabet."""
    if urlsafe_ok:
        data = data.replace("-", "+").replace("_", "/")
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise RequestShapeError(f"{where}: image data is not valid base64") from None
    try:
        with Image.open(io.BytesIO(raw)) as image:
            image_format = image.format
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError) as error:
        raise RequestShapeError(f"{where}: image does not decode ({error})") from None
    actual = FORMAT_MIME.get(image_format or "", f"image/{(image_format or 'unknown').lower()}")
    if actual != mime:
        raise RequestShapeError(f"{where}: declared {mime} but the bytes are {actual}")
    return raw


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise RequestShapeError(message)


def _string(value: Any, where: str) -> str:
    _require(isinstance(value, str), f"{where} must be a string")
    return str(value)


def parse_openai(body: dict[str, Any], record: RecordedRequest) -> None:
    """POST /v1/chat/completions: model, messages[{role, content: str | parts}], image_url data URLs."""
    record.model = _string(body.get("model"), "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestShapeError("messages must be a non-empty list")
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        _require(isinstance(message, dict), f"{where} must be an object")
        _parse_message(message, where, record, _parse_openai_part, allow_empty=True)
    for name in ("temperature", "max_tokens", "max_completion_tokens", "seed"):
        if name in body:
            _require(isinstance(body[name], int | float), f"{name} must be a number")


def _parse_message(
    message: Any,
    where: str,
    record: RecordedRequest,
    parse_part: Callable[[Any, str, RecordedRequest], None],
    *,
    allow_empty: bool,
) -> None:
    """An OpenAI message's role and content: a string, or a list of parts each checked by `parse_part`
    (the Responses API refuses an empty list, Chat Completions takes one)."""
    role = message.get("role")
    _require(role in ROLES, f"{where}.role {role!r} is not valid")
    record.roles.append(role)
    content = message.get("content")
    if isinstance(content, str):
        record.texts.append(content)
        return
    _require(
        isinstance(content, list) and (allow_empty or bool(content)),
        f"{where}.content must be a string or a list of parts",
    )
    for j, part in enumerate(content):
        parse_part(part, f"{where}.content[{j}]", record)


def _recorded_text(part: Any, where: str, record: RecordedRequest, text_type: str) -> bool:
    """Whether a content part (an object) is text, of type `text_type`: then it is recorded here."""
    _require(isinstance(part, dict), f"{where} must be an object")
    if part.get("type") != text_type:
        return False
    record.texts.append(_string(part.get("text"), f"{where}.text"))
    return True


def _parse_openai_part(part: Any, where: str, record: RecordedRequest) -> None:
    if _recorded_text(part, where, record, "text"):
        return
    kind = part.get("type")
    if kind == "video_url":
        _parse_video_url(part, where, record)
        return
    _require(kind == "image_url", f"{where}.type {kind!r} is not 'text', 'image_url' or 'video_url'")
    image_url = part.get("image_url")
    _require(isinstance(image_url, dict), f"{where}.image_url must be an object")
    url = _string(image_url.get("url"), f"{where}.image_url.url")
    detail = image_url.get("detail", "auto")
    _require(detail in IMAGE_DETAILS, f"{where}.image_url.detail {detail!r} is not 'low', 'high' or 'auto'")
    _record_image(url, detail, where, record)


def _record_image(url: str, detail: str, where: str, record: RecordedRequest) -> None:
    """An image sent as a base64 data URL (the only kind accepted), decoded, checked and recorded."""
    header, sep, data = url.partition(",")
    _require(
        bool(sep) and header.startswith("data:") and header.endswith(";base64"),
        f"{where}: only base64 data URLs are accepted",
    )
    mime = header[len("data:") : -len(";base64")]
    record.images.append(decode_image(data, mime, where))
    record.image_mimes.append(mime)
    record.image_details.append(detail)


def _parse_video_url(part: dict[str, Any], where: str, record: RecordedRequest) -> None:
    """vLLM's frame-sequence video: `data:video/jpeg;base64,<frame>,<frame>,...` (JPEG frames)."""
    video_url = part.get("video_url")
    if not isinstance(video_url, dict):
        raise RequestShapeError(f"{where}.video_url must be an object")
    url = _string(video_url.get("url"), f"{where}.video_url.url")
    header, sep, data = url.partition(",")
    _require(
        bool(sep) and header == "data:video/jpeg;base64",
        f"{where}: only data:video/jpeg;base64 frame sequences are accepted",
    )
    frames = [
        decode_image(frame, "image/jpeg", f"{where} frame {k}") for k, frame in enumerate(data.split(","))
    ]
    record.videos.append(frames)


IMAGE_DETAILS = frozenset({"low", "high", "auto"})


def parse_responses(body: dict[str, Any], record: RecordedRequest) -> None:
    """POST /v1/responses: model, input (a string or a list of messages with input_text /
    input_image parts), optional instructions, max_output_tokens >= 16, reasoning {effort, summary}."""
    record.model = _string(body.get("model"), "model")
    if "instructions" in body and body["instructions"] is not None:
        record.roles.append("system")
        record.texts.append(_string(body["instructions"], "instructions"))
    items = body.get("input")
    if isinstance(items, str):
        record.roles.append("user")
        record.texts.append(items)
        items = []
    elif not isinstance(items, list) or not items:
        raise RequestShapeError("input must be a string or a non-empty list")
    for i, item in enumerate(items):
        where = f"input[{i}]"
        _require(isinstance(item, dict), f"{where} must be an object")
        _require(
            item.get("type", "message") == "message", f"{where}.type {item.get('type')!r} is not 'message'"
        )
        _parse_message(item, where, record, _parse_responses_part, allow_empty=False)
    limit = body.get("max_output_tokens")
    if limit is not None:
        _require(
            isinstance(limit, int) and not isinstance(limit, bool), "max_output_tokens must be an integer"
        )
        _require(
            limit >= 16,
            f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {limit} instead.",
        )
    if "temperature" in body:
        _require(isinstance(body["temperature"], int | float), "temperature must be a number")
    reasoning = body.get("reasoning")
    if reasoning is not None:
        _require(isinstance(reasoning, dict), "reasoning must be an object")
        effort = reasoning.get("effort")
        _require(
            effort in (None, "none", "minimal", "low", "medium", "high", "xhigh"),
            f"Invalid value: {effort!r}. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        )
        summary = reasoning.get("summary")
        _require(
            summary in (None, "auto", "concise", "detailed"), f"reasoning.summary {summary!r} is not valid"
        )


def _parse_responses_part(part: Any, where: str, record: RecordedRequest) -> None:
    if _recorded_text(part, where, record, "input_text"):
        return
    kind = part.get("type")
    _require(kind == "input_image", f"{where}.type {kind!r} is not 'input_text' or 'input_image'")
    detail = part.get("detail")
    _require(detail in IMAGE_DETAILS, f"{where}.detail {detail!r} is not 'low', 'high' or 'auto'")
    _record_image(_string(part.get("image_url"), f"{where}.image_url"), detail, where, record)


def _parse_anthropic_blocks(content: Any, where: str, record: RecordedRequest) -> None:
    if isinstance(content, str):
        record.texts.append(content)
        return
    _require(isinstance(content, list), f"{where} must be a string or a list of blocks")
    for j, block in enumerate(content):
        at = f"{where}[{j}]"
        if _recorded_text(block, at, record, "text"):
            continue
        kind = block.get("type")
        _require(kind == "image", f"{at}.type {kind!r} is not 'text' or 'image'")
        source = block.get("source")
        _require(isinstance(source, dict) and source.get("type") == "base64", f"{at}.source must be base64")
        mime = _string(source.get("media_type"), f"{at}.source.media_type")
        record.images.append(decode_image(_string(source.get("data"), f"{at}.source.data"), mime, at))
        record.image_mimes.append(mime)


def parse_anthropic(body: dict[str, Any], record: RecordedRequest) -> None:
    """POST /v1/messages: model, max_tokens, optional system, messages of user/assistant blocks."""
    record.model = _string(body.get("model"), "model")
    _require(isinstance(body.get("max_tokens"), int), "max_tokens is required and must be an integer")
    if "system" in body:
        record.roles.append("system")
        _parse_anthropic_blocks(body["system"], "system", record)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestShapeError("messages must be a non-empty list")
    for i, message in enumerate(messages):
        _require(isinstance(message, dict), f"messages[{i}] must be an object")
        role = message.get("role")
        _require(role in {"user", "assistant"}, f"messages[{i}].role {role!r} is not 'user' or 'assistant'")
        record.roles.append(role)
        _parse_anthropic_blocks(message.get("content"), f"messages[{i}].content", record)
    thinking = body.get("thinking")
    if thinking is not None:
        _require(isinstance(thinking, dict), "thinking must be an object")
        kind = thinking.get("type")
        _require(kind in {"enabled", "disabled", "adaptive"}, f"thinking.type {kind!r} is not valid")
        if kind == "enabled":
            budget = thinking.get("budget_tokens")
            _require(isinstance(budget, int) and budget >= 1024, "thinking.budget_tokens must be >= 1024")
            _require(budget < body["max_tokens"], "thinking.budget_tokens must be less than max_tokens")


def _parse_gemini_parts(parts: Any, where: str, record: RecordedRequest) -> None:
    if not isinstance(parts, list) or not parts:
        raise RequestShapeError(f"{where} must be a non-empty list")
    for j, part in enumerate(parts):
        at = f"{where}[{j}]"
        _require(isinstance(part, dict), f"{at} must be an object")
        if "text" in part:
            record.texts.append(_string(part["text"], f"{at}.text"))
            continue
        inline = part.get("inlineData", part.get("inline_data"))
        _require(isinstance(inline, dict), f"{at} has neither text nor inlineData")
        mime = _string(inline.get("mimeType", inline.get("mime_type")), f"{at}.inlineData.mimeType")
        data = _string(inline.get("data"), f"{at}.inlineData.data")
        record.images.append(decode_image(data, mime, at, urlsafe_ok=True))
        record.image_mimes.append(mime)


def parse_gemini(body: dict[str, Any], record: RecordedRequest) -> None:
    """POST /v1beta/models/{model}:generateContent: contents[{role, parts}], systemInstruction, config."""
    system = body.get("systemInstruction", body.get("system_instruction"))
    if system is not None:
        _require(isinstance(system, dict), "systemInstruction must be an object")
        record.roles.append("system")
        _parse_gemini_parts(system.get("parts"), "systemInstruction.parts", record)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise RequestShapeError("contents must be a non-empty list")
    for i, content in enumerate(contents):
        _require(isinstance(content, dict), f"contents[{i}] must be an object")
        role = content.get("role", "user")
        _require(role in {"user", "model"}, f"contents[{i}].role {role!r} is not 'user' or 'model'")
        record.roles.append(role)
        _parse_gemini_parts(content.get("parts"), f"contents[{i}].parts", record)
    config = body.get("generationConfig", {})
    _require(isinstance(config, dict), "generationConfig must be an object")
