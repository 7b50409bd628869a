"""Input no route can store never becomes a 500, on either backend: NUL characters (PostgreSQL
refuses them in any text), JSON nested thousands of levels deep, ids beyond the integer range, on
every route the app has; and a refused form kept as a draft is bounded."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import httpx
from fastapi.routing import APIRoute
from platform_env import Env, LiveServer, password_of
from platform_http import Browserless, csrf_from
from sqlalchemy import func, select

from expvid.platform.db.models import AuditEvent, Decision, FormDraft, LoginAttempt
from expvid.platform.web.drafts import MAX_DRAFTS, MAX_TOTAL

HUGE_IDS = ("2147483648", "9223372036854775808", "1" + "0" * 30, "-1", "0")
_PARAM = re.compile(r"{([a-z_]+)}")


def _routes(routes: Iterable[object]) -> Iterator[APIRoute]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
            continue
        inner = getattr(route, "original_router", None)
        yield from _routes(getattr(inner, "routes", None) or getattr(route, "routes", None) or [])


def _paths(server: LiveServer) -> list[tuple[str, str]]:
    app = server.server.config.app
    return sorted({(route.path, method) for route in _routes(app.routes) for method in route.methods})


def _stored(env: Env) -> tuple[int, int, int]:
    with env.database.read() as db:
        return (
            db.scalar(select(func.count()).select_from(AuditEvent)) or 0,
            db.scalar(select(func.count()).select_from(Decision)) or 0,
            db.scalar(select(func.count()).select_from(LoginAttempt)) or 0,
        )


def test_no_route_answers_500_to_ids_nul_or_deep_json(env: Env, server: LiveServer) -> None:
    root = Browserless(server.url, "root", password_of("root"))
    alice = Browserless(server.url, "alice", password_of("alice"))
    deep = b"[" * 50_000 + b"]" * 50_000
    nul_json = {"verdict": "reject", "justification": "bad\u0000byte", "item_version": 2, "name": "x\u0000",
                "outcome": "rejected", "steps": [{"ref": 3, "text": "a\u0000"}]}  # fmt: skip
    nul_form = {"verdict": "reject", "justification": "bad\x00byte", "username": "a\x00b", "password": "x\x00y" * 4,
                "reason": "why\x00", "role": "annotator", "disciplines": "Bio\x00logy", "item_version": "2"}  # fmt: skip
    checked = 0
    try:
        for path, method in _paths(server):
            if path == "/logout":
                continue
            params = _PARAM.findall(path)
            values = HUGE_IDS if any(p.endswith("_id") and p != "video_id" for p in params) else ("bob",)
            for value in (*values, "a%00b") if params else ("",):
                concrete = _PARAM.sub(value, path)
                for client in (root, alice):
                    headers = {"X-CSRF-Token": client.csrf}
                    if method == "GET":
                        responses = [
                            client.client.get(concrete),
                            client.client.get(concrete, params={"q": "x\x00", "draft": "\x00"}),
                            client.client.get(concrete, params={"offset": HUGE_IDS[1], "limit": HUGE_IDS[2]}),
                        ]
                    else:
                        responses = [
                            client.client.request(method, concrete, json=nul_json, headers=headers),
                            client.client.request(
                                method, concrete, data={**nul_form, "csrf_token": client.csrf}
                            ),
                            client.client.request(
                                method,
                                concrete,
                                content=deep,
                                headers={**headers, "Content-Type": "application/json"},
                            ),
                            client.client.request(
                                method,
                                concrete,
                                headers=headers,
                                json={
                                    "verdict": "approve",
                                    "justification": "looks right",
                                    "item_version": HUGE_IDS[1],
                                    "decision_version": 2**40,
                                    "outcome": "verified",
                                },
                            ),
                        ]
                    for response in responses:
                        checked += 1
                        assert response.status_code < 500, (
                            method,
                            concrete,
                            response.status_code,
                            response.text[-300:],
                        )
    finally:
        root.close()
        alice.close()
    assert checked > 300


def test_nul_characters_and_deep_json_are_refused_with_the_field_named(env: Env, server: LiveServer) -> None:
    alice = Browserless(server.url, "alice", password_of("alice"))
    root = Browserless(server.url, "root", password_of("root"))
    item_id = env.item_id("tools/0")
    before = _stored(env)
    try:
        api = alice.decide(item_id, "reject", "the dish\u0000 is plastic")
        assert api.status_code == 422 and api.json()["problems"] == [
            "justification contains a NUL character (\\u0000), which cannot be stored"
        ]
        form = alice.form_post(f"/items/{item_id}/decision", {"verdict": "reject", "justification": "x\x00y",
                                                              "item_version": "2"})  # fmt: skip
        assert form.status_code == 422 and "&#39;justification&#39; contains a NUL character" in form.text
        search = root.client.get("/items", params={"q": "dish\x00"})
        assert search.status_code == 422 and "&#39;q&#39; contains a NUL" in search.text
        assert root.client.get("/api/items", params={"q": "\x00"}).status_code == 422
        deep = alice.client.post(f"/api/items/{item_id}/decision", content=b"[" * 100_000 + b"]" * 100_000,
                                 headers={"X-CSRF-Token": alice.csrf, "Content-Type": "application/json"})  # fmt: skip
        assert deep.status_code == 422 and "nested more than 32 levels" in deep.json()["problems"][0]
        with httpx.Client(base_url=server.url, follow_redirects=False) as anonymous:
            token = csrf_from(anonymous.get("/login").text)
            login = anonymous.post(
                "/login", data={"username": "alice\x00", "password": "whatever1", "csrf_token": token}
            )
            assert login.status_code == 422
        assert root.client.get("/admin/users/%00/active").status_code in (404, 405)
        assert alice.client.get("/api/me").status_code == 200  # the server is fine afterwards
    finally:
        alice.close()
        root.close()
    assert _stored(env) == before


def test_refused_forms_kept_as_drafts_are_bounded(env: Env) -> None:
    """Twenty refused posts of nearly a megabyte each: the session keeps a few drafts of bounded size."""
    from platform_env import LiveServer as Live

    from expvid.platform import create_app

    with Live(create_app(env.settings, database=env.database)) as live:
        alice = Browserless(live.url, "alice", password_of("alice"))
        item_id = env.item_id("tools/0")
        try:
            location = ""
            for i in range(20):
                typed = f"attempt {i} " + "x" * 1_000_000
                response = alice.form_post(f"/items/{item_id}/decision", {"verdict": "reject", "justification": typed,
                                                                         "item_version": "2"})  # fmt: skip
                assert response.status_code == 303, response.status_code
                location = response.headers["location"]
            page = alice.client.get(location).text
            assert "attempt 19 xxxx" in page and "is kept in this draft only up to 16,000 characters" in page
        finally:
            alice.close()
    with env.database.read() as db:
        drafts = list(db.scalars(select(FormDraft)))
    stored = sum(len(str(d.data)) + len(str(d.problems)) for d in drafts)
    assert len(drafts) == MAX_DRAFTS and stored < MAX_DRAFTS * (MAX_TOTAL + 10_000)
    assert stored < 1_000_000  # was 20 MB
