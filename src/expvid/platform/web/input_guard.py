"""Refuse input no route can store, before any route sees it: NUL characters and deep JSON nesting.

Why a middleware and not a check per field: PostgreSQL refuses a NUL character in any text it
stores or compares (`text`, `varchar`, `jsonb`), so a NUL in a justification, a search, a user name
at sign-in, a draft token or a path segment turned into a 500 wherever it reached a query. Python's
JSON parser raises `RecursionError` on a body nested a few thousand levels deep, which nothing
caught. Checking the request once, here, covers every route, including routes added later:

- a path with a NUL names nothing: 404;
- a query parameter or a form field (urlencoded or multipart) with a NUL: 422 naming it;
- a JSON body nested deeper than `MAX_DEPTH`, or with a NUL in any key or string: 422 naming where.

Bodies are already capped by `BodyLimit` (outside this middleware), so buffering one is bounded.
Malformed JSON is left to the route, which answers its own 422.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, unquote

from markupsafe import escape
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Deepest JSON nesting accepted; the API's bodies are at most four levels deep.
MAX_DEPTH = 32
NUL = "\x00"
_WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


async def _answer(scope: Scope, send: Send, status: int, message: str, problems: list[str]) -> None:
    if scope["path"].startswith("/api/"):
        body = json.dumps({"detail": message, "problems": problems}).encode()
        content_type = b"application/json"
    else:
        items = "".join(f"<li>{escape(p)}</li>" for p in problems)
        body = (
            f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{status} · expvid review</title>"
            '<link rel=stylesheet href="/static/style.css"></head><body><main>'
            f'<div class="problems" role="alert" data-testid="error"><h1>{status}</h1><p>{escape(message)}</p>'
            f"<ul>{items}</ul><p>Use the back button: what you typed is still in the form.</p></div>"
            "</main></body></html>"
        ).encode()
        content_type = b"text/html; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _shown(name: str) -> str:
    return repr(name.replace(NUL, "\\0"))


def _named(kind: str, pairs: list[tuple[str, str]]) -> list[str]:
    bad = sorted({name for name, value in pairs if NUL in name or NUL in value})
    return [
        f"the {kind} {_shown(name)} contains a NUL character (\\0), which cannot be stored" for name in bad
    ]


def json_problems(value: Any) -> list[str]:
    """Where a parsed JSON value nests too deep or holds a NUL (iterative: no recursion limit)."""
    stack: list[tuple[Any, str, int]] = [(value, "body", 0)]
    problems: list[str] = []
    while stack and len(problems) < 10:
        node, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            return [TOO_DEEP]
        if isinstance(node, str):
            if NUL in node:
                problems.append(f"{where} contains a NUL character (\\u0000), which cannot be stored")
        elif isinstance(node, dict):
            for key, child in node.items():
                if NUL in key:
                    problems.append(f"a key in {where} contains a NUL character (\\u0000)")
                name = (f"{where}.{key}" if where != "body" else str(key)).replace(NUL, "\\0")
                stack.append((child, name, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, f"{where}.{i}", depth + 1) for i, child in enumerate(node))
    return problems


TOO_DEEP = f"the JSON body is nested more than {MAX_DEPTH} levels deep"


def body_problems(content_type: str, body: bytes) -> list[str]:
    """What in a request body cannot be stored (empty: nothing; malformed JSON is the route's to refuse)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "application/json" or kind.endswith("+json"):
        try:
            value = json.loads(body)
        except RecursionError:  # nested thousands of levels deep
            return [TOO_DEEP]
        except (ValueError, UnicodeDecodeError):
            return []
        return json_problems(value)
    if kind == "application/x-www-form-urlencoded":
        text = body.decode("utf-8", "replace")
        return _named("form field", parse_qsl(text, keep_blank_values=True))
    if kind == "multipart/form-data" and b"\x00" in body:
        return ["the form contains a NUL character (\\0), which cannot be stored"]
    return []


class InputGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if NUL in scope["path"] or NUL in unquote(scope.get("raw_path", b"").decode("latin-1")):
            await _answer(scope, send, 404, "Not found.", [])
            return
        query = scope.get("query_string", b"").decode("latin-1")
        if "%00" in query or NUL in query:
            pairs = parse_qsl(query, keep_blank_values=True, encoding="utf-8", errors="replace")
            await _answer(scope, send, 422, "Bad request.", _named("query parameter", pairs))
            return
        if scope["method"] not in _WRITE_METHODS:
            await self.app(scope, receive, send)
            return
        content_type = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"content-type"), "")
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break  # the client went away
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problems = body_problems(content_type, body)
        if problems:
            await _answer(scope, send, 422, "The submission was not saved.", problems)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
