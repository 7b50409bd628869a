"""One ASGI middleware that adds fixed headers to every HTTP response, for both web apps.

Pure ASGI (not Starlette's `BaseHTTPMiddleware`) so that streamed and range responses (videos)
stay streamed. A header the route already set wins: a route may loosen or tighten caching itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ResponseHeaders:
    """Adds `headers` (lower-case byte names) to every HTTP response that does not set them."""

    def __init__(self, app: ASGIApp, headers: Sequence[tuple[bytes, bytes]]) -> None:
        self.app = app
        self.headers = list(headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = [
                    *message.get("headers", []),
                    *(header for header in self.headers if header[0] not in present),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)
