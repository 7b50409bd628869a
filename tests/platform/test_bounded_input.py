"""Bounded input over real HTTP: oversized bodies get 413, oversized fields and malformed values 422
(never a 500), in the JSON API and in the forms, and nothing of a refused request is stored."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from platform_env import Env, LiveServer, decide, password_of
from platform_http import Browserless
from sqlalchemy import func, select

from expvid.platform import create_app
from expvid.platform.db.models import AuditEvent, Decision

LIMIT = 64 * 1024


@pytest.fixture
def small(env: Env) -> Iterator[LiveServer]:
    """The app with a 64 KiB body limit (the default is 1 MiB), so the tests send little."""
    settings = env.settings.model_copy(update={"max_body_bytes": LIMIT})
    with LiveServer(create_app(settings, database=env.database)) as live:
        yield live


def _stored(env: Env) -> tuple[int, int]:
    with env.database.read() as db:
        return (
            db.scalar(select(func.count()).select_from(AuditEvent)) or 0,
            db.scalar(select(func.count()).select_from(Decision)) or 0,
        )


def test_oversized_bodies_are_refused_before_they_are_read(env: Env, small: LiveServer) -> None:
    alice = Browserless(small.url, "alice", password_of("alice"))
    try:
        item_id = env.item_id("materials/0")
        before = _stored(env)
        huge = "x" * (LIMIT + 1)
        api = alice.api_post(f"/api/items/{item_id}/decision", {"verdict": "reject", "justification": huge,
                                                                 "item_version": 2})  # fmt: skip
        assert api.status_code == 413 and "larger than the 64 KiB" in api.json()["detail"]
        form = alice.form_post(f"/items/{item_id}/decision", {"verdict": "reject", "justification": huge})
        assert form.status_code == 413 and "text/html" in form.headers["content-type"]
        assert "what you typed is still in the form" in form.text

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'{"verdict": "reject", "justification": "'
            for _ in range(LIMIT // 1024 + 2):
                yield b"y" * 1024
            yield b'", "item_version": 2}'

        streamed = alice.client.post(
            f"/api/items/{item_id}/decision",
            content=chunks(),
            headers={"X-CSRF-Token": alice.csrf, "Content-Type": "application/json"},
        )
        assert streamed.status_code == 413
        assert _stored(env) == before
        assert alice.client.get("/api/me").status_code == 200  # the server is fine afterwards
    finally:
        alice.close()


def test_each_text_field_has_a_limit_in_the_server_and_the_form(env: Env, server: LiveServer) -> None:
    limits = env.settings.limits
    alice = Browserless(server.url, "alice", password_of("alice"))
    try:
        item_id = env.item_id("tools/0")
        before = _stored(env)
        long_reason = "because " * (limits.justification // 8 + 1)
        response = alice.decide(item_id, "reject", long_reason)
        assert response.status_code == 422
        assert response.json()["problems"] == [
            f"the justification has {len(long_reason):,} characters; at most {limits.justification:,} are allowed"
        ]
        edit = {"question": "Which tool?" + "?" * limits.question,
                "options": {"A": "a" * (limits.option + 1), "B": "b", "C": "c", "D": "d"}, "answer": "A"}  # fmt: skip
        problems = alice.decide(item_id, "edit", "too long fields", content=edit).json()["problems"]
        assert any(p.startswith("the question has") for p in problems)
        assert any(p.startswith("option A has") for p in problems)
        steps_item = env.item_id("sequence_generation/1")
        rows = [{"ref": 5, "text": "s" * (limits.step_text + 1), "start": 3.0, "end": 4.0}]
        problems = alice.decide(steps_item, "edit", "long step", steps=rows).json()["problems"]
        assert problems == [
            f"step row 1 has {limits.step_text + 1:,} characters; at most {limits.step_text:,} are allowed"
        ]
        rows = [{"ref": None, "text": f"step {i}"} for i in range(limits.steps + 1)]
        problems = alice.decide(steps_item, "edit", "many steps", steps=rows).json()["problems"]
        assert problems == [f"the step list has {limits.steps + 1} rows; at most {limits.steps} are allowed"]

        # The form: maxlength on every field, and the same refusal kept on the page (303 -> draft).
        page = alice.client.get(f"/items/{item_id}").text
        assert f'maxlength="{limits.justification}"' in page and f'maxlength="{limits.question}"' in page
        assert f'maxlength="{limits.option}"' in page
        assert f'maxlength="{limits.step_text}"' in alice.client.get(f"/items/{steps_item}").text
        refused = alice.form_post(f"/items/{item_id}/decision", {"verdict": "reject", "justification": long_reason,
                                                                 "item_version": "2"})  # fmt: skip
        assert refused.status_code == 303
        assert "at most 4,000 are allowed" in alice.client.get(refused.headers["location"]).text
        assert _stored(env) == before
    finally:
        alice.close()


def test_malformed_values_are_422_or_404_never_500(env: Env, server: LiveServer) -> None:
    decide(env, "alice", "tools/1", "approve")
    decide(env, "bob", "tools/1", "reject")  # a conflict for carol
    conflict = env.item_id("tools/1")
    item_id = env.item_id("tools/0")
    alice = Browserless(server.url, "alice", password_of("alice"))
    carol = Browserless(server.url, "carol", password_of("carol"))
    root = Browserless(server.url, "root", password_of("root"))
    before = _stored(env)
    try:
        cases: list[tuple[httpx.Response, int, str]] = [
            (carol.api_post(f"/api/adjudications/{conflict}", {"outcome": "rejected", "justification": "not visible",
                                                               "item_version": "abc"}), 422, "item_version"),
            (carol.api_post(f"/api/adjudications/{conflict}", {"outcome": "maybe", "justification": "not visible",
                                                               "item_version": 4}), 422, "outcome"),
            (carol.api_post(f"/api/adjudications/{conflict}", {"outcome": "verified", "justification": "ok then",
                                                               "item_version": 10**30}), 422, "item_version"),
            (alice.api_post(f"/api/items/{item_id}/decision", {"verdict": "approve", "justification": "fine",
                                                               "item_version": "abc"}), 422, "item_version"),
            (alice.api_post(f"/api/items/{item_id}/decision", {"verdict": "edit", "justification": "odd answer",
                                                               "item_version": 2, "content": {"question": "Q?",
                                                               "options": {"A": {"x": 1}}, "answer": {"y": 2}}}),
             422, "content"),
            (alice.api_post(f"/api/items/{env.item_id('sequence_generation/1')}/decision",
                            {"verdict": "edit", "justification": "bad time", "item_version": 2,
                             "steps": [{"ref": 5, "text": "x", "start": "soon"}]}), 422, "steps.0.start"),
            (alice.client.post(f"/api/items/{env.item_id('sequence_generation/1')}/preview",
                               content=b'{"steps": [{"ref": 5, "text": "x", "start": NaN}]}',
                               headers={"X-CSRF-Token": alice.csrf, "Content-Type": "application/json"}),
             422, "steps.0.start"),
            (alice.client.post(f"/api/items/{item_id}/decision", content=b"[1, 2]",
                               headers={"X-CSRF-Token": alice.csrf, "Content-Type": "application/json"}),
             422, "JSON object"),
            (alice.client.post(f"/api/items/{item_id}/decision", content=b"{not json",
                               headers={"X-CSRF-Token": alice.csrf, "Content-Type": "application/json"}),
             422, "must be JSON"),
            (root.client.get("/api/items", params={"offset": 10**30}), 422, "offset"),
            (root.client.get("/api/items", params={"offset": "-1"}), 422, "offset"),
            (root.client.get("/items", params={"offset": 99999999999999999999}), 422, "offset"),
            (root.client.get("/items", params={"q": "x" * 500}), 422, "q"),
            (root.client.get("/items/99999999999999999999"), 404, ""),
            (alice.client.get("/api/items/abc"), 404, ""),
            (alice.client.get(f"/items/{item_id}", params={"draft": "z" * 100}), 422, "draft"),
        ]  # fmt: skip
        for response, status, fragment in cases:
            assert response.status_code == status, (
                response.request.url,
                response.status_code,
                response.text[-300:],
            )
            assert fragment in response.text, (response.request.url, response.text[-300:])
        # A malformed version in the adjudication *form* is kept on the page with its message.
        form = carol.form_post(f"/adjudicate/{conflict}", {"outcome": "rejected", "justification": "typed carefully",
                                                           "item_version": "abc", "version_label": "reject"})  # fmt: skip
        assert form.status_code == 303 and "?draft=" in form.headers["location"]
        page = carol.client.get(form.headers["location"]).text
        assert "is missing or not a number" in page and "typed carefully" in page
        assert _stored(env) == before
    finally:
        for client in (alice, carol, root):
            client.close()
