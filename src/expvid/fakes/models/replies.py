"""What the loopback server answers: protocol-neutral replies, and responders that choose them.

A `Reply` says WHAT to answer (text, reasoning, an HTTP error, a broken body, a delay, a dropped
connection); each protocol route renders it in its own wire shape (OpenAI, Anthropic, Gemini).
A responder is any callable `RecordedRequest -> Reply | str`; `fixed`, `script` and `echo` are the
common ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from expvid.fakes.models.request_shapes import RecordedRequest


class CountedFields(TypedDict, total=False):
    """What an answer may set besides its text when its prompt tokens are counted (`Reply.counted`)."""

    completion_tokens: int | None
    reasoning_tokens: int | None
    finish_reason: str
    delay_s: float


class AnswerFields(CountedFields, total=False):
    """What an answer may set besides its text (`Reply.ok`); the fields are `Reply`'s."""

    reasoning: str | None
    prompt_tokens: int
    cache_read_tokens: int | None


@dataclass(frozen=True)
class Reply:
    """One answer of the loopback server. Build with the class methods; fields are for the routes."""

    text: str | None = ""
    reasoning: str | None = None
    #: Neutral reason ("stop", "length"); each protocol maps it to its own spelling.
    finish_reason: str = "stop"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Sent verbatim instead of a rendered body (malformed bodies, hand-written error bodies).
    raw_body: bytes | None = None
    error_message: str = ""
    delay_s: float = 0.0
    #: Start the response, then close the connection before the body: a dropped connection.
    drop_connection: bool = False
    prompt_tokens: int = 10
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    #: Of `prompt_tokens`, those reported as read from the provider's prompt cache.
    cache_read_tokens: int | None = None
    #: The model declines: OpenAI `message.refusal` (content null), Claude `stop_reason: refusal`,
    #: Gemini a SAFETY stop.
    refusal: str | None = None
    #: Report the prompt tokens the provider would count for the request (`usage`)
    #: instead of `prompt_tokens`.
    count_usage: bool = False

    @classmethod
    def refused(cls, text: str = "I'm sorry, but I can't help with that.") -> Reply:
        return cls(text=None, refusal=text, finish_reason="stop")

    @classmethod
    def ok(cls, text: str | None, **fields: Unpack[AnswerFields]) -> Reply:
        return cls(text=text, **fields)

    @classmethod
    def counted(cls, text: str | None, **fields: Unpack[CountedFields]) -> Reply:
        """An answer whose usage is what the provider would bill for the request that arrived."""
        return cls(text=text, count_usage=True, **fields)

    @classmethod
    def slow(cls, text: str, delay_s: float) -> Reply:
        return cls(text=text, delay_s=delay_s)

    @classmethod
    def rate_limited(cls, retry_after: str | float | None = 1, *, header: str = "Retry-After") -> Reply:
        """429; `retry_after` as delta-seconds (number or string) or an HTTP-date string, or None."""
        headers = {} if retry_after is None else {header: str(retry_after)}
        return cls(status=429, headers=headers, error_message="rate limit reached (loopback)")

    @classmethod
    def error(cls, status: int = 500, message: str = "internal error (loopback)", **headers: str) -> Reply:
        return cls(status=status, error_message=message, headers=headers)

    @classmethod
    def malformed(cls, body: bytes = b"<html>502 Bad Gateway</html>", status: int = 200) -> Reply:
        return cls(status=status, raw_body=body)

    @classmethod
    def dropped(cls) -> Reply:
        return cls(drop_connection=True)


Responder = Callable[[RecordedRequest], "Reply | str"]


def as_reply(value: Reply | str) -> Reply:
    return value if isinstance(value, Reply) else Reply.ok(value)


def fixed(reply: Reply | str) -> Responder:
    """The same answer to every request."""
    answer = as_reply(reply)
    return lambda _request: answer


class Script:
    """Answers calls in order from a list; afterwards `then` (a responder), or HTTP 500 if none.

    Thread-safe: the server calls it from its own thread while the test inspects it.
    """

    def __init__(
        self, replies: Iterable[Reply | str], *, then: Responder | Reply | str | None = None
    ) -> None:
        self._replies = [as_reply(r) for r in replies]
        self._then: Responder | None = then if callable(then) else (None if then is None else fixed(then))
        self._next = 0
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._replies) - self._next

    def __call__(self, request: RecordedRequest) -> Reply | str:
        with self._lock:
            if self._next < len(self._replies):
                reply = self._replies[self._next]
                self._next += 1
                return reply
        if self._then is not None:
            return self._then(request)
        return Reply.error(500, f"loopback script exhausted after {len(self._replies)} replies")


def script(*replies: Reply | str, then: Responder | Reply | str | None = None) -> Script:
    return Script(replies, then=then)


def echo(request: RecordedRequest) -> Reply:
    """Answers with a summary of what arrived; handy for checking what a backend sent."""
    summary = f"model={request.model} images={request.n_images} texts={len(request.texts)}"
    if request.videos:  # frame sequences (vLLM's video_url): how many videos, how many frames each
        summary += f" videos={len(request.videos)} frames={','.join(str(len(v)) for v in request.videos)}"
    return Reply.ok(summary)


def usage_for(reply: Reply) -> dict[str, Any]:
    """Token counts to report: the reply's own, or a word count when it gave none."""
    completion = reply.completion_tokens
    if completion is None:
        completion = len((reply.text or "").split()) + len((reply.reasoning or "").split())
    return {
        "prompt": reply.prompt_tokens,
        "completion": completion,
        "reasoning": reply.reasoning_tokens,
        "cached": reply.cache_read_tokens,
    }
