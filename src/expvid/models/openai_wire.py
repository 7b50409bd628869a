"""The OpenAI chat-completions wire format: request bodies out, completions in. Pure functions.

Kept apart from the HTTP client so that the loopback server and the tests can check the exact shape,
and so that parsing is strict: a body that is not a usable completion is an error, never an empty answer.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any

from expvid.models.body_draft import BodyDraft
from expvid.models.hf.inputs import frame_rate
from expvid.models.param_rules import effort_for
from expvid.models.retry import AttemptFailure
from expvid.models.types import (
    BackendError,
    GenerateRequest,
    GenerateResponse,
    ImagePart,
    Message,
    ResponseSchema,
    TextPart,
)
from expvid.schema import Usage


class Base64DataUrl(str):
    """A data URL made here: a checked MIME type and base64, so every character can go into a JSON
    string unescaped. `body_bytes` splices these without scanning them (a request's frames are
    100 KB to megabytes; scanning them for characters to escape was a tenth of the client's CPU)."""

    __slots__ = ()


_MIME = re.compile(r"[A-Za-z0-9.+-]+/[A-Za-z0-9.+-]+")


def _base64_url(mime: str, payload: str) -> str:
    url = f"data:{mime};base64,{payload}"
    return Base64DataUrl(url) if _MIME.fullmatch(mime) else url


def data_url(image: ImagePart) -> str:
    return _base64_url(image.mime, base64.b64encode(image.data).decode("ascii"))


def video_data_url(frames: Sequence[ImagePart], where: str = "request") -> str:
    """Frames as one video in vLLM's frame-sequence form: `data:video/jpeg;base64,<f1>,<f2>,...`.

    vLLM reads a `video/jpeg` data URL as the comma-separated base64 JPEG frames, in order, with no
    re-sampling (its `VideoMediaIO.load_base64`); only JPEG frames can travel this way.
    """
    wrong = sorted({frame.mime for frame in frames if frame.mime != "image/jpeg"})
    if wrong:
        raise BackendError(
            f"{where}: frames sent as a video must be JPEG (vLLM's video/jpeg frame sequence), got {wrong}; "
            "sample JPEG frames or use --input-mode images"
        )
    encoded = ",".join(base64.b64encode(frame.data).decode("ascii") for frame in frames)
    return _base64_url("video/jpeg", encoded)


def openai_content(
    message: Message, *, as_video: bool = False, where: str = "request", detail: str | None = None
) -> str | list[dict[str, Any]]:
    """Parts in message order; a message that is one text part is sent as a plain string.

    Plain strings keep text-only system prompts working with chat templates that reject part lists.
    With `as_video`, each run of consecutive images becomes one `video_url` part.
    """
    if len(message.content) == 1 and isinstance(message.content[0], TextPart):
        return message.content[0].text
    parts: list[dict[str, Any]] = []
    run: list[ImagePart] = []

    def flush() -> None:
        if run:
            parts.append({"type": "video_url", "video_url": {"url": video_data_url(run, where)}})
            run.clear()

    for part in message.content:
        if isinstance(part, TextPart):
            flush()
            parts.append({"type": "text", "text": part.text})
        elif as_video:
            run.append(part)
        else:
            image: dict[str, Any] = {"url": data_url(part)}
            if detail is not None:
                image["detail"] = detail
            parts.append({"type": "image_url", "image_url": image})
    flush()
    return parts


_SPLICE = "\x00"  # a stand-in no data URL contains, escaped by json.dumps as \u0000


_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f\x7f"\\]')


def _json_safe(url: str) -> bool:
    """Whether `url` can go into a JSON string as it is (what `data_url` makes always can)."""
    return isinstance(url, Base64DataUrl) or (url.isascii() and _NEEDS_ESCAPE.search(url) is None)


def body_bytes(body: dict[str, Any]) -> bytes:
    """`json.dumps(body)` as UTF-8, with the image and video data URLs spliced in unescaped.

    A request carries 8-128 base64 frames (100 KB to megabytes); `json.dumps` scans every byte of them
    for characters to escape, which base64 never has: a third of the client's CPU per request
    (benchmarks/cli_run.py). The URLs are replaced by a stand-in, the small rest is encoded, and the
    URLs are put back between quotes. A URL that would need escaping goes through `json.dumps`.
    """
    urls: list[str] = []
    messages = []
    for message in body.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            messages.append(message)
            continue
        parts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            holder = part.get(kind) if kind in ("image_url", "video_url") else None
            url = holder.get("url") if isinstance(holder, dict) else None
            if isinstance(holder, dict) and isinstance(url, str) and _json_safe(url):
                urls.append(url)
                part = {**part, kind: {**holder, "url": _SPLICE}}
            parts.append(part)
        messages.append({**message, "content": parts})
    if not urls:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    text = json.dumps({**body, "messages": messages}, ensure_ascii=False)
    pieces = text.split('"\\u0000"')
    if len(pieces) != len(urls) + 1:  # the stand-in also occurs elsewhere: no shortcut
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    out = [pieces[0]]
    for url, rest in zip(urls, pieces[1:], strict=True):
        out += ['"', url, '"', rest]
    return "".join(out).encode("utf-8")


def encode_messages(request: GenerateRequest, detail: str | None = None) -> list[dict[str, Any]]:
    """The request's messages on the wire (images base64-encoded once, reused by every attempt);
    `detail`: OpenAI's image detail, sent with every image when set (else the API's "auto")."""
    item = request.metadata.get("item_id")
    where = f"item {item}" if item is not None else "request"
    as_video = request.input_mode == "video"
    return [
        {"role": m.role, "content": openai_content(m, as_video=as_video, where=where, detail=detail)}
        for m in request.messages
    ]


def video_io_kwargs(request: GenerateRequest) -> dict[str, Any] | None:
    """vLLM's per-request `media_io_kwargs` for a video request: take every frame sent (its default
    keeps only the first 32) at the frames' own rate (what Qwen2.5-VL turns into time positions)."""
    if request.input_mode != "video":
        return None
    runs = [len(run) for run in _image_runs(request)]
    if not runs:
        return None
    n_frames = max(runs)
    return {"video": {"num_frames": n_frames, "fps": round(frame_rate(request, n_frames, 1.0), 6)}}


def _image_runs(request: GenerateRequest) -> list[list[ImagePart]]:
    runs: list[list[ImagePart]] = []
    for message in request.messages:
        current: list[ImagePart] = []
        for part in message.content:
            if isinstance(part, ImagePart):
                current.append(part)
            elif current:
                runs.append(current)
                current = []
        if current:
            runs.append(current)
    return runs


def compose_body(draft: BodyDraft, messages: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request body for one attempt, and the record of what it sends (`sent`)."""
    request, rules, adjustments = draft.request, draft.rules, draft.adjustments
    draft.body.update(model=draft.model, messages=messages)
    draft.sent["input_mode"] = request.input_mode

    field: str = rules.token_limit_field
    renamed = adjustments.get(field)
    if renamed is not None and renamed.action == "rename" and renamed.to:
        field = renamed.to
    draft.body[field] = request.max_tokens
    draft.sent.update(token_limit_field=field, max_tokens=request.max_tokens)

    effort = _thinking(draft)

    draft.set_temperature(effort)

    if request.seed is not None:
        if draft.refused("seed"):
            draft.sent["seed"] = None
        else:
            draft.send("seed", request.seed)

    schema = request.response_schema
    if schema is not None and not draft.refused("response_format"):
        draft.body["response_format"] = response_format(schema)
        draft.sent["response_format"] = f"json_schema:{schema.name}"

    video = video_io_kwargs(request)
    if video is not None and not draft.refused("media_io_kwargs"):
        draft.body["media_io_kwargs"] = video
        draft.sent["video"] = video["video"]

    return draft.finish(("temperature", "reasoning_effort", "seed"))


def response_format(schema: ResponseSchema) -> dict[str, Any]:
    """Chat Completions' structured output, as the openai SDK writes it for a pydantic model
    (`client.beta.chat.completions.parse(response_format=Model)`)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": schema.name, "schema": schema.json_schema, "strict": schema.strict},
    }


def _thinking(draft: BodyDraft) -> str | None:
    """Put the thinking switch in the body as the rules say; returns the reasoning effort sent."""
    rules = draft.rules
    thinking = draft.request.thinking
    if rules.thinking_style == "chat_template_kwargs" and thinking is not None:
        if draft.refused("chat_template_kwargs"):
            return None
        enabled = thinking.enabled and thinking.budget_tokens != 0
        draft.body["chat_template_kwargs"] = {"enable_thinking": enabled}
        draft.sent["enable_thinking"] = enabled
        return None
    if rules.thinking_style != "reasoning_effort":
        return None
    enabled = thinking is not None and thinking.enabled
    budget = thinking.budget_tokens if thinking is not None else None
    if thinking is None and rules.reasoning_efforts is None:
        return None  # nothing asked and nothing known: the model's default effort applies
    effort = effort_for(budget, enabled, rules.reasoning_efforts) if thinking is not None else None
    effort = draft.adjusted_effort("reasoning_effort", effort)
    if "reasoning_effort" in draft.not_sent:
        return None  # this endpoint refuses the parameter: nothing is recorded as sent
    if effort is None:
        draft.sent["reasoning_effort"] = None  # the model's default
        return None
    draft.send("reasoning_effort", effort)
    return effort


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_from(
    raw: Any, *, input_name: str = "prompt_tokens", output_name: str = "completion_tokens"
) -> Usage:
    """Token counts of an OpenAI usage object: Chat Completions names them prompt/completion tokens, the
    Responses API input/output tokens; both put reasoning and cached tokens in `<name>_details`."""
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get(f"{output_name}_details")
    reasoning = _int_or_none(details.get("reasoning_tokens")) if isinstance(details, dict) else None
    input_details = raw.get(f"{input_name}_details")
    cached = _int_or_none(input_details.get("cached_tokens")) if isinstance(input_details, dict) else None
    return Usage(
        prompt_tokens=_int_or_none(raw.get(input_name)),
        completion_tokens=_int_or_none(raw.get(output_name)),
        reasoning_tokens=reasoning,
        cache_read_tokens=cached,
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


def json_object(raw: bytes) -> dict[str, Any]:
    """An answer's body as a JSON object; AttemptFailure.malformed when it is not one."""
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        excerpt = raw[:120].decode("utf-8", errors="replace")
        raise AttemptFailure.malformed(f"body is not JSON: {excerpt!r}") from None
    if not isinstance(body, dict):
        raise AttemptFailure.malformed(f"body is a JSON {type(body).__name__}, not an object")
    return body


def parse_chat_completion(raw: bytes, *, model: str) -> GenerateResponse:
    """Parse a chat.completion body, raising AttemptFailure.malformed for anything unusable."""
    body = json_object(raw)
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
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        raise AttemptFailure.malformed("message.refusal is not a string")
    reasoning = message.get("reasoning_content")
    if reasoning is None:
        reasoning = message.get("reasoning")  # newer vLLM name for the same field
    if reasoning is not None and not isinstance(reasoning, str):
        raise AttemptFailure.malformed("reasoning field is not a string")
    if refusal:
        # A refusal is the model's answer: recorded with its text, scored as unparseable (the
        # content, null in OpenAI's refusal shape, becomes an empty reply), never retried.
        text = text or ""
    elif text is None and not reasoning:
        raise AttemptFailure.malformed("message.content is null and there is no reasoning")
    finish_reason = choice.get("finish_reason")
    return GenerateResponse(
        text=text,
        refusal=refusal or None,
        reasoning=reasoning or None,
        finish_reason=finish_reason if isinstance(finish_reason, str) else None,
        usage=usage_from(body.get("usage")),
        model=body["model"] if isinstance(body.get("model"), str) else model,
    )
