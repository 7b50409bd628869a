"""OpenAI's Responses API (`POST /v1/responses`) wire format: request bodies out, responses in. Pure.

Request (the API reference's shapes): `input` is a list of messages whose content parts are
`input_text` and `input_image` (`image_url` a base64 data URL, `detail` "auto": the same images the
chat path sends as `image_url` parts); the token cap is `max_output_tokens`; reasoning models take
`reasoning: {"effort", "summary"}`: the effort comes from the thinking switch by the same
model rules as the chat path (`param_rules`), and `summary: "auto"` asks for the model's reasoning
summary, which is kept in the prediction's `reasoning` (never in its answer, so extraction never
reads it). The temperature follows the chat path's rules (OpenAI reasoning models take none). The
Responses API has no `seed`: it is not sent, and the prediction says so. `store: false`: nothing is
kept on OpenAI's side.

Response: `output` is a list of items; `reasoning` items carry `summary: [{"type": "summary_text",
"text"}]`, `message` items carry `content: [{"type": "output_text", "text"} | {"type": "refusal",
"refusal"}]`. `status` is "completed", or "incomplete" with `incomplete_details.reason`
("max_output_tokens": the answer was cut, recorded as finish reason "length"; "content_filter": a
refusal), or "failed" with an `error`. Usage is `input_tokens`, `output_tokens` (reasoning
included) and `output_tokens_details.reasoning_tokens`.
"""

from __future__ import annotations

from typing import Any

from expvid.models.body_draft import BodyDraft
from expvid.models.openai_wire import data_url, json_object, usage_from
from expvid.models.param_rules import effort_for
from expvid.models.retry import AttemptFailure
from expvid.models.types import GenerateRequest, GenerateResponse, ImagePart, Message, TextPart
from expvid.schema import Usage

NO_SEED = "the Responses API has no seed parameter"
#: `status` values of a Response object that carry an answer (or its cut-off part).
ANSWER_STATUSES = ("completed", "incomplete")


def responses_content(message: Message, detail: str | None = None) -> list[dict[str, Any]]:
    """A message's parts as Responses input parts (images as data URLs, in message order, at the
    run's `detail`; "auto", the API's default, when none is set)."""
    parts: list[dict[str, Any]] = []
    for part in message.content:
        if isinstance(part, TextPart):
            parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, ImagePart):
            parts.append({"type": "input_image", "image_url": data_url(part), "detail": detail or "auto"})
    return parts


def encode_input(request: GenerateRequest, detail: str | None = None) -> list[dict[str, Any]]:
    """The request's messages as the `input` list (images base64-encoded once, reused by attempts)."""
    return [
        {"type": "message", "role": message.role, "content": responses_content(message, detail)}
        for message in request.messages
    ]


def compose_responses_body(
    draft: BodyDraft, input_items: list[dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The body for one attempt and the record of what it sends (`sent`), as the chat path records it."""
    request = draft.request
    draft.body.update(model=draft.model, input=input_items, store=False)
    draft.sent.update(api="responses", input_mode="images")
    draft.body["max_output_tokens"] = request.max_tokens
    draft.sent.update(token_limit_field="max_output_tokens", max_tokens=request.max_tokens)

    effort = _reasoning(draft)
    draft.set_temperature(effort)
    draft.sent["seed"] = None
    if request.seed is not None:
        draft.not_sent["seed"] = NO_SEED
    schema = request.response_schema
    if schema is not None:  # the Responses API's form of structured output
        draft.body["text"] = {
            "format": {
                "type": "json_schema",
                "name": schema.name,
                "schema": schema.json_schema,
                "strict": schema.strict,
            }
        }
        draft.sent["response_format"] = f"json_schema:{schema.name}"
    return draft.finish(("temperature", "reasoning"))


def _reasoning(draft: BodyDraft) -> str | None:
    """`reasoning: {effort, summary}` for reasoning models; returns the effort sent (None: default)."""
    if draft.rules.thinking_style != "reasoning_effort":
        return None
    reasoning: dict[str, Any] = {}
    thinking = draft.request.thinking
    effort = None
    if thinking is not None:
        effort = effort_for(thinking.budget_tokens, thinking.enabled, draft.rules.reasoning_efforts)
    effort = draft.adjusted_effort("reasoning.effort", effort)
    if effort is not None:
        reasoning["effort"] = effort
    draft.sent["reasoning_effort"] = effort
    if not draft.refused("reasoning.summary"):
        reasoning["summary"] = "auto"
        draft.sent["reasoning_summary"] = "auto"
    if reasoning:
        draft.body["reasoning"] = reasoning
    return effort


def responses_usage(raw: Any) -> Usage:
    return usage_from(raw, input_name="input_tokens", output_name="output_tokens")


def parse_response_object(body: dict[str, Any], *, model: str) -> GenerateResponse:
    """A Response object (already decoded) as a GenerateResponse; AttemptFailure for unusable ones."""
    if body.get("object") != "response":
        raise AttemptFailure.malformed(f"object is {body.get('object')!r}, not 'response'")
    status = body.get("status")
    if status == "failed":
        raw_error = body.get("error")
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        code = str(error.get("code") or "")
        # server_error and rate limits inside a 200 are the provider's trouble: worth another try.
        raise AttemptFailure.malformed(
            f"response failed: {code or 'error'}: {str(error.get('message') or '')[:300]}",
            retryable=code in ("server_error", "rate_limit_exceeded", "vector_store_timeout", ""),
        )
    if status not in ANSWER_STATUSES:
        raise AttemptFailure.malformed(f"response status {status!r} has no answer")
    output = body.get("output")
    if not isinstance(output, list):
        raise AttemptFailure.malformed("output is not a list")
    texts: list[str] = []
    summaries: list[str] = []
    refusals: list[str] = []
    for index, item in enumerate(output):
        if not isinstance(item, dict):
            raise AttemptFailure.malformed(f"output[{index}] is not an object")
        kind = item.get("type")
        if kind == "reasoning":
            for part in item.get("summary") or []:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    summaries.append(part["text"])
        elif kind == "message":
            for part in item.get("content") or []:
                if not isinstance(part, dict):
                    raise AttemptFailure.malformed(
                        f"output[{index}].content has a part that is not an object"
                    )
                if part.get("type") == "output_text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
                elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
                    refusals.append(part["refusal"])
    raw_details = body.get("incomplete_details")
    details: dict[str, Any] = raw_details if isinstance(raw_details, dict) else {}
    reason = details.get("reason") if status == "incomplete" else None
    finish_reason = {"max_output_tokens": "length", "content_filter": "content_filter"}.get(
        str(reason), str(reason) if reason else "stop"
    )
    refusal = "\n".join(refusals) or None
    if refusal is None and reason == "content_filter":
        refusal = "incomplete: content_filter"
    text: str | None = "".join(texts) if texts else None
    if refusal is not None or (text is None and reason == "max_output_tokens"):
        # A refusal is the model's answer; an answer cut before any text (the whole budget spent on
        # reasoning) is an empty answer cut by the limit: both recorded and scored, never retried.
        text = text or ""
    elif text is None and not summaries:
        raise AttemptFailure.malformed("the response has no output_text and no reasoning summary")
    return GenerateResponse(
        text=text,
        refusal=refusal,
        reasoning="\n\n".join(summaries) if summaries else None,
        finish_reason=finish_reason,
        usage=responses_usage(body.get("usage")),
        model=body["model"] if isinstance(body.get("model"), str) else model,
    )


def parse_response(raw: bytes, *, model: str) -> GenerateResponse:
    """Parse a `/v1/responses` body, raising AttemptFailure.malformed for anything unusable."""
    return parse_response_object(json_object(raw), model=model)
