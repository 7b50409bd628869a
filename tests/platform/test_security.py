"""Security over real HTTP on loopback: sessions, CSRF, roles, blind review, id guessing, throttling.

The write routes are enumerated from the application itself, so a route added later without the
session / CSRF / role checks fails these tests instead of slipping through.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import httpx
import pytest
from fastapi.routing import APIRoute
from platform_env import Env, LiveServer, password_of
from platform_http import Browserless, csrf_from
from sqlalchemy import func, select

from expvid.platform import create_app
from expvid.platform.config import ThrottlePolicy
from expvid.platform.db.models import Assignment, AuditEvent, Decision, Item, User, WebSession

WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


def api_routes(routes: Iterable[object]) -> Iterator[APIRoute]:
    """Every APIRoute, looking inside included routers (FastAPI may wrap them lazily)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
            continue
        inner = getattr(route, "original_router", None)
        yield from api_routes(getattr(inner, "routes", None) or getattr(route, "routes", None) or [])


def write_routes(server: LiveServer) -> list[tuple[str, str]]:
    app = server.server.config.app
    return sorted(
        (route.path, method)
        for route in api_routes(app.routes)
        for method in route.methods
        if method in WRITE_METHODS
    )


def concrete(path: str, item_id: int) -> str:
    return (
        path.replace("{item_id}", str(item_id)).replace("{video_id}", "E1").replace("{username}", "bob")
        .replace("{token_id}", "1")
    )  # fmt: skip


def snapshot(env: Env) -> tuple[int, ...]:
    with env.database.read() as db:
        return (
            db.scalar(select(func.count()).select_from(AuditEvent)) or 0,
            db.scalar(select(func.count()).select_from(Decision)) or 0,
            db.scalar(select(func.count()).select_from(User)) or 0,
            db.scalar(select(func.count()).select_from(Item)) or 0,
            db.scalar(select(func.count()).select_from(WebSession)) or 0,
            int(db.scalar(select(func.sum(Item.version))) or 0),
        )


@pytest.fixture
def clients(env: Env, server: LiveServer) -> Iterator[dict[str, Browserless]]:
    made = {
        name: Browserless(server.url, name, password_of(name))
        for name in ("alice", "bob", "carol", "dave", "root")
    }
    yield made
    for client in made.values():
        client.close()


def test_every_write_route_is_covered(server: LiveServer) -> None:
    routes = {path for path, _ in write_routes(server)}
    assert {"/items/{item_id}/decision", "/api/items/{item_id}/decision", "/adjudicate/{item_id}", "/admin/users",
            "/login", "/logout", "/account/tokens", "/account/tokens/{token_id}/revoke",
            "/admin/items/{item_id}/annotators", "/admin/short-items/annotators", "/admin/users/{username}/reassign",
            "/admin/users/{username}/edit", "/admin/users/{username}/password", "/account/password"} <= routes  # fmt: skip
    assert len(routes) >= 20


def test_writes_without_a_session_are_refused(env: Env, server: LiveServer) -> None:
    item_id = env.item_id("materials/0")
    before = snapshot(env)
    with httpx.Client(base_url=server.url, follow_redirects=False) as anonymous:
        for path, method in write_routes(server):
            body = {"verdict": "approve", "justification": "sneaky write", "item_version": 2, "username": "x",
                    "password": "y" * 10, "role": "admin", "outcome": "rejected", "reason": "because"}  # fmt: skip
            response = anonymous.request(method, concrete(path, item_id), data=body)
            expected = 403 if path == "/login" else 401  # the login form has its own CSRF token
            assert response.status_code == expected, (path, response.status_code)
    assert snapshot(env) == before


def test_writes_without_the_csrf_token_are_refused(
    env: Env, server: LiveServer, clients: dict[str, Browserless]
) -> None:
    item_id = env.item_id("materials/0")
    before = snapshot(env)
    for user in ("alice", "root"):
        for path, method in write_routes(server):
            if path == "/login":
                continue
            form = {
                "verdict": "approve",
                "justification": "no token",
                "item_version": "2",
                "reason": "because",
            }
            as_form = clients[user].client.request(method, concrete(path, item_id), data=form)
            assert as_form.status_code == 403, (user, path, as_form.status_code)
            as_json = clients[user].client.request(method, concrete(path, item_id), json=form)
            assert as_json.status_code == 403, (user, path)
            wrong = clients[user].client.request(
                method, concrete(path, item_id), json=form, headers={"X-CSRF-Token": clients["bob"].csrf}
            )
            assert wrong.status_code == 403, (user, path)  # another session's token does not work either
    assert snapshot(env) == before


def test_writes_with_the_wrong_role_are_refused(env: Env, clients: dict[str, Browserless]) -> None:
    item_id = env.item_id("materials/0")
    alice, carol, dave = clients["alice"], clients["carol"], clients["dave"]
    before = snapshot(env)
    refused = [
        alice.form_post("/admin/users", {"username": "mallory", "password": "long-password", "role": "admin"}),
        alice.form_post("/admin/assign", {}),
        alice.form_post(f"/admin/items/{item_id}/reopen", {"reason": "because I can"}),
        alice.form_post("/admin/users/bob/active", {"active": "0"}),
        carol.form_post("/admin/users/bob/active", {"active": "0"}),
        alice.form_post(f"/adjudicate/{item_id}", {"outcome": "rejected", "justification": "not mine", "item_version": "2"}),
        alice.api_post(f"/api/adjudications/{item_id}", {"outcome": "rejected", "justification": "no", "item_version": 2}),
        carol.api_post(f"/api/items/{item_id}/decision", {"verdict": "approve", "justification": "xxxxx", "item_version": 2}),
        clients["root"].api_post(f"/api/items/{item_id}/decision", {"verdict": "approve", "justification": "xxxxx", "item_version": 2}),
        carol.form_post("/experiments/E1/questions", {"task": "scientific_discovery", "new_question": "A ____.",
                                                      "new_answers": "x", "new_justification": "adjudicators do not write"}),
        dave.form_post("/experiments/E1/questions", {"task": "scientific_discovery", "new_question": "A ____.",
                                                     "new_answers": "x", "new_justification": "not my experiment"}),
        alice.form_post(f"/admin/items/{env.item_id('tools/2')}/annotators", {"username": "alice"}),
        carol.form_post("/admin/short-items/annotators", {"username": "carol", "discipline": "Chemistry"}),
        alice.form_post("/admin/users/bob/tokens/revoke", {}),
        alice.form_post("/admin/users/bob/reassign", {"reason": "I want his items"}),
        carol.form_post("/admin/users/bob/reassign", {}),
        alice.form_post("/admin/users/alice/edit", {"role": "admin", "disciplines": ""}),
        carol.form_post("/admin/users/carol/edit", {"role": "admin", "disciplines": ""}),
        alice.form_post("/admin/users/bob/password", {"password": "taken over by alice"}),
        dave.form_post("/admin/users/root/password", {"password": "taken over by dave"}),
    ]  # fmt: skip
    for response in refused:
        assert response.status_code in (403, 404), (response.request.url, response.status_code)
    for path in ("/dashboard", "/items", "/admin/users", "/api/progress", "/api/agreement"):
        assert alice.client.get(path).status_code == 403, path
    assert snapshot(env) == before


def test_an_annotator_cannot_read_or_change_other_items_by_guessing_ids(
    env: Env, clients: dict[str, Browserless]
) -> None:
    alice = clients["alice"]
    with env.database.read() as db:
        all_ids = set(db.scalars(select(Item.id)))
        mine = set(db.scalars(select(Assignment.item_id).where(Assignment.user_id == env.users["alice"])))
    others = [*sorted(all_ids - mine), max(all_ids) + 1, 999999]
    assert env.item_id("tools/2") in others  # dave's Chemistry item
    before = snapshot(env)
    for item_id in others:
        for path in (f"/items/{item_id}", f"/api/items/{item_id}", f"/items/{item_id}/history",
                     f"/api/items/{item_id}/history", f"/media/items/{item_id}/clip", f"/media/items/{item_id}/source",
                     f"/next/{item_id}"):  # fmt: skip
            assert alice.client.get(path).status_code == 404, path
        response = alice.api_post(
            f"/api/items/{item_id}/decision",
            {"verdict": "reject", "justification": "guessing", "item_version": 2},
        )
        assert response.status_code == 404
        response = alice.form_post(
            f"/items/{item_id}/decision",
            {"verdict": "reject", "justification": "guessing", "item_version": "2"},
        )
        assert response.status_code == 404
    assert snapshot(env) == before
    assert clients["dave"].client.get(f"/api/items/{env.item_id('tools/2')}").status_code == 200


def test_review_is_blind_until_the_item_is_settled(env: Env, clients: dict[str, Browserless]) -> None:
    item_id = env.item_id("tools/0")
    secret = "the dish looks glass-bottomed to me"
    assert clients["alice"].decide(item_id, "reject", secret).status_code == 200
    bob = clients["bob"]
    assert bob.client.get(f"/api/items/{item_id}").json()["my_decision"] is None
    for path in (
        f"/api/items/{item_id}",
        f"/items/{item_id}",
        f"/items/{item_id}/history",
        f"/api/items/{item_id}/history",
        "/",
    ):
        text = bob.client.get(path).text
        assert "glass-bottomed" not in text, path
    assert bob.decide(item_id, "approve").json()["item_state"] == "conflict"
    view = clients["carol"].client.get(f"/api/adjudications/{item_id}").json()
    assert {j["justification"] for j in view["judgements"]} == {secret, "checked against the clip"}
    page = clients["carol"].client.get(f"/adjudicate/{item_id}").text
    assert secret in page and "alice" not in page and "bob" not in page


def _login(
    client: httpx.Client, username: str, password: str, client_ip: str | None = None
) -> httpx.Response:
    headers = {"X-Forwarded-For": client_ip} if client_ip else {}
    token = csrf_from(client.get("/login").text)
    return client.post(
        "/login", data={"username": username, "password": password, "csrf_token": token}, headers=headers
    )


def test_failed_sign_ins_slow_down_their_client_and_never_lock_out_the_owner(env: Env) -> None:
    """Five wrong passwords from one client delay that client only; alice signs in from her own
    computer at once. Behind the proxy, clients are told apart by the configured header."""
    # Delays long enough to still be running when the dashboard is read, however slow the machine.
    slow = ThrottlePolicy(base_delay_seconds=300, max_delay_seconds=600)
    settings = env.settings.model_copy(update={"proxy_header": "X-Forwarded-For", "throttle": slow})
    with (
        LiveServer(create_app(settings, database=env.database)) as live,
        httpx.Client(base_url=live.url, follow_redirects=False) as client,
    ):
        attacker, owner = "203.0.113.66", "198.51.100.7"
        for _ in range(5):
            assert _login(client, "alice", "wrong-password", attacker).status_code == 401
        throttled = _login(client, "alice", password_of("alice"), attacker)  # the attacker waits...
        assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) > 0
        assert "expvid_session" not in throttled.cookies and "wait" in throttled.text
        signed_in = _login(client, "alice", password_of("alice"), owner)  # ...alice does not
        assert signed_in.status_code == 303 and "expvid_session" in signed_in.cookies
        client.cookies.clear()
        assert _login(client, "bob", password_of("bob"), attacker).status_code == 303  # other accounts: free
        client.cookies.clear()
        # The header is the client's address only from a trusted proxy: from anywhere else it is ignored.
        untrusted = settings.model_copy(update={"trusted_proxies": ["10.255.0.1"]})
        with (
            LiveServer(create_app(untrusted, database=env.database)) as direct,
            httpx.Client(base_url=direct.url, follow_redirects=False) as other,
        ):
            for forged in ("192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5"):
                assert _login(other, "carol", "wrong-password", forged).status_code == 401
            assert _login(other, "carol", password_of("carol"), "192.0.2.99").status_code == 429

    with LiveServer(create_app(settings, database=env.database)) as live:
        admin = Browserless(live.url, "root", password_of("root"))
        try:
            dashboard = admin.client.get("/dashboard").text
        finally:
            admin.close()
    section = dashboard[dashboard.index('data-testid="sign-in-security"') :]
    alice_row = section[section.index('data-account="alice"') :].split("</tr>")[0]
    assert (
        "<td>5</td><td>1</td>" in alice_row and attacker in alice_row
    )  # 5 failures, 1 client, still waiting
    assert 'data-account="carol"' in section


def test_session_cookie_flags_logout_and_redirects(env: Env, server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, follow_redirects=False) as client:
        assert client.get("/").headers["location"] == "/login?next=/"
        assert client.get("/api/me").status_code == 401
        page = client.get("/login")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        response = client.post(
            "/login",
            data={"username": "alice", "password": password_of("alice"), "csrf_token": csrf_from(page.text),
                  "next": "//evil.example/steal"},
        )  # fmt: skip
        assert response.status_code == 303 and response.headers["location"] == "/"
        cookie = response.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        me = client.get("/api/me").json()
        assert me["username"] == "alice"
        assert client.post("/logout", data={"csrf_token": me["csrf_token"]}).status_code == 303
        old = response.cookies["expvid_session"]
        client.cookies.set("expvid_session", old)
        assert client.get("/api/me").status_code == 401  # the server forgot the session
    with env.database.read() as db:
        stored = db.scalar(select(User.password_hash).where(User.username == "alice"))
    assert stored is not None and stored.startswith("$argon2id$") and password_of("alice") not in stored


def test_video_is_served_with_range_requests_to_its_reviewers_only(
    env: Env, clients: dict[str, Browserless], server: LiveServer
) -> None:
    item_id = env.item_id("materials/0")
    data = (env.candidates / "sources" / "E1" / "video.mp4").read_bytes()
    response = clients["alice"].client.get(
        f"/media/items/{item_id}/source", headers={"Range": "bytes=100-1099"}
    )
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes 100-1099/{len(data)}"
    assert response.content == data[100:1100]
    whole = clients["alice"].client.get(f"/media/items/{item_id}/clip")
    assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
    assert whole.content == (env.candidates / "videos" / "level_1" / "E1" / "clip_m.mp4").read_bytes()
    assert (
        clients["alice"].client.get("/media/experiments/E1/full", headers={"Range": "bytes=0-9"}).status_code
        == 206
    )
    assert clients["dave"].client.get(f"/media/items/{item_id}/clip").status_code == 404
    assert clients["dave"].client.get("/media/experiments/E1/full").status_code == 404
    with httpx.Client(base_url=server.url, follow_redirects=False) as anonymous:
        assert anonymous.get(f"/media/items/{item_id}/clip").status_code == 303
