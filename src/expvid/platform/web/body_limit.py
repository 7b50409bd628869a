"""Request bodies larger than the configured limit are refused with 413 before the app reads them.

A pure ASGI middleware: a declared `Content-Length` over the limit is answered at once, without
reading the body; a body sent without a length (chunked) is counted as it arrives and refused as soon
as it passes the limit. The answer is JSON under `/api/` and a short HTML page elsewhere.
"""

from __future__ import annotations

import json

from markupsafe import escape
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    pass


def _message(limit: int) -> str:
    size = f"{limit // 1024} KiB" if limit < 1 << 20 else f"{limit / (1 << 20):g} MiB"
    return (
        f"The request is larger than the {size} this server accepts. Shorten the text (each field has "
        "its own limit, shown next to it) and send it again."
    )


async def _refuse(scope: Scope, send: Send, limit: int) -> None:
    message = _message(limit)
    if scope["path"].startswith("/api/"):
        body = json.dumps({"detail": message, "problems": [message]}).encode()
        content_type = b"application/json"
    else:
        body = (
            "<!doctype html><html lang=en><head><meta charset=utf-8><title>413 · expvid review</title>"
            '<link rel=stylesheet href="/static/style.css"></head><body><main>'
            '<div class="problems" role="alert" data-testid="error"><h1>413</h1>'
            f"<p>{escape(message)}</p><p>Use the back button: what you typed is still in the form.</p>"
            "</div></main></body></html>"
        ).encode()
        content_type = b"text/html; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close")],
        }
    )  # fmt: skip
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared < 0 or declared > self.max_bytes:
                    await _refuse(scope, send, self.max_bytes)
                    return
        received = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge()
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, watched_send)
        except BodyTooLarge:
            if started:
                raise
            await _refuse(scope, send, self.max_bytes)
