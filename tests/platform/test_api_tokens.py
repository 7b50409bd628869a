"""Personal API tokens over real HTTP: created on the account page (shown once, stored as a digest),
accepted as `Authorization: Bearer` on the JSON API without a CSRF token, scoped to the user's role,
read-only when asked, revocable, and never accepted by the HTML forms."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import httpx
from platform_env import Env, LiveServer, password_of
from platform_http import Browserless
from sqlalchemy import select, update

from expvid.platform.db.models import ApiToken, Decision, User, utc_now

_TOKEN = re.compile(r'data-testid="token-value">(evp_[^<]+)<')


def _create(client: Browserless, name: str, **extra: str) -> str:
    response = client.form_post("/account/tokens", {"name": name, **extra})
    assert response.status_code == 201 and response.headers["cache-control"] == "no-store"
    match = _TOKEN.search(response.text)
    assert match, response.text[-500:]
    return match.group(1)


def _bearer(server: LiveServer, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, follow_redirects=False
    )


def test_a_token_drives_the_json_api_as_its_user(env: Env, server: LiveServer) -> None:
    alice = Browserless(server.url, "alice", password_of("alice"))
    try:
        token = _create(alice, "labelling script")
        listing = alice.client.get("/account/tokens").text
        assert "labelling script" in listing and token[:10] in listing and token not in listing  # shown once
        with env.database.read() as db:
            stored = db.scalar(select(ApiToken.token_hash).where(ApiToken.name == "labelling script"))
        assert stored == hashlib.sha256(token.encode()).hexdigest()  # only a digest at rest

        item_id = env.item_id("tools/0")
        with _bearer(server, token) as script:
            me = script.get("/api/me").json()
            assert (me["username"], me["role"], me["via_token"], me["csrf_token"]) == (
                "alice",
                "annotator",
                True,
                None,
            )
            version = script.get(f"/api/items/{item_id}").json()["version"]
            saved = script.post(f"/api/items/{item_id}/decision",
                                json={"verdict": "approve", "justification": "seen at 0:02", "item_version": version})  # fmt: skip
            assert saved.status_code == 200, saved.text  # no CSRF token needed with a bearer token
            # Scoped to alice's role and items: no admin figures, no one else's item.
            assert script.get("/api/progress").status_code == 403
            assert script.get(f"/api/items/{env.item_id('tools/2')}").status_code == 404
            # Never accepted by the pages and their forms (those need the session cookie and CSRF token).
            assert script.get(f"/items/{item_id}").status_code == 303
            assert script.post(f"/items/{item_id}/decision", data={"verdict": "reject"}).status_code == 401
            assert script.get("/api/tokens").json()["tokens"][0]["last_used_at"] is not None
        with env.database.read() as db:
            decision = db.scalar(select(Decision).where(Decision.item_id == item_id))
        assert decision is not None and decision.justification == "seen at 0:02"

        reader = _create(alice, "dashboard reader", read_only="1", expires_days="30")
        with _bearer(server, reader) as script:
            assert script.get("/api/items").status_code == 200
            refused = script.post(f"/api/items/{item_id}/preview", json={"steps": []})
            assert refused.status_code == 403 and "read-only" in refused.json()["detail"]

        # Revoked, expired, a deactivated owner, a made-up token or another scheme: 401.
        token_id = alice.client.get("/api/tokens").json()["tokens"][-1]["id"]
        assert alice.form_post(f"/account/tokens/{token_id}/revoke", {}).status_code == 303
        with _bearer(server, token) as script:
            assert script.get("/api/me").status_code == 401
        with env.database.write() as db:
            db.execute(update(ApiToken).where(ApiToken.name == "dashboard reader")
                       .values(expires_at=utc_now() - timedelta(seconds=1)))  # fmt: skip
        with _bearer(server, reader) as script:
            assert script.get("/api/me").status_code == 401
        with httpx.Client(base_url=server.url) as anonymous:
            for header in ("Bearer evp_made-up", "Basic YWxpY2U6cHc=", "Bearer"):
                assert anonymous.get("/api/me", headers={"Authorization": header}).status_code == 401
    finally:
        alice.close()


def test_tokens_follow_the_account_and_admins_can_revoke_them(env: Env, server: LiveServer) -> None:
    bob = Browserless(server.url, "bob", password_of("bob"))
    root = Browserless(server.url, "root", password_of("root"))
    try:
        token = _create(bob, "sync")
        assert bob.form_post("/account/tokens", {"name": ""}).status_code == 422
        # Another user's token cannot be revoked by guessing its id.
        token_id = bob.client.get("/api/tokens").json()["tokens"][0]["id"]
        alice = Browserless(server.url, "alice", password_of("alice"))
        assert alice.form_post(f"/account/tokens/{token_id}/revoke", {}).status_code == 404
        alice.close()
        # The token acts with bob's *current* role.
        with env.database.write() as db:
            db.execute(update(User).where(User.username == "bob").values(role="adjudicator"))
        with _bearer(server, token) as script:
            assert script.get("/api/me").json()["role"] == "adjudicator"
        with env.database.write() as db:
            db.execute(update(User).where(User.username == "bob").values(role="annotator"))
        assert 'data-user="bob"' in root.client.get("/admin/users").text
        assert root.form_post("/admin/users/bob/tokens/revoke", {}).status_code == 303
        with _bearer(server, token) as script:
            assert script.get("/api/me").status_code == 401
        second = _create(bob, "another")
        assert root.form_post("/admin/users/bob/active", {"active": "0"}).status_code == 303
        with _bearer(server, second) as script:
            assert script.get("/api/me").status_code == 401  # dies with the account
    finally:
        bob.close()
        root.close()
