"""Figures an admin can trust and resets that close every door: open work counts only what can
still be done, and a password change or reset revokes the account's API tokens (unless asked not to,
and the page says so)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from platform_batches import exclude_experiment, next_batch
from platform_env import Env, LiveServer, decide, password_of
from platform_http import Browserless
from sqlalchemy import func, select
from typer.testing import CliRunner

from expvid.cli.platform import platform_app
from expvid.platform import create_app
from expvid.platform.db.models import Assignment, Item
from expvid.platform.services.errors import SYSTEM
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.users import set_active

_TOKEN = re.compile(r'data-testid="token-value">(evp_[^<]+)<')


def test_open_work_counts_only_items_that_can_still_be_reviewed(uid_campaign: Env, tmp_path: Path) -> None:
    env = uid_campaign
    decide(env, "alice", "tools/E1-tool0", "approve")
    decide(env, "bob", "tools/E1-tool0", "approve")  # verified: nobody's open work
    second = next_batch(env.candidates, tmp_path / "batch2")
    exclude_experiment(second, "E1")  # every E1 item is removed upstream
    import_candidates(env.database, second)
    with env.database.write() as db:
        set_active(db, "bob", False, actor=SYSTEM)
    with env.database.read() as db:
        really_open = db.scalar(
            select(func.count())
            .select_from(Assignment)
            .join(Item, Item.id == Assignment.item_id)
            .where(Assignment.completed_at.is_(None), Item.state.in_(("pending", "in_review")))
        )
        stale = db.scalar(
            select(func.count()).select_from(Assignment).where(Assignment.completed_at.is_(None))
        )
    assert really_open == 1 and stale > 5  # dave's E2 item; the rest lie on removed items
    with LiveServer(create_app(env.settings, database=env.database)) as live:
        root = Browserless(live.url, "root", password_of("root"))
        try:
            annotators = {a["username"]: a for a in root.client.get("/api/progress").json()["annotators"]}
            dashboard = root.client.get("/dashboard").text
        finally:
            root.close()
    assert {name: a["open"] for name, a in annotators.items()} == {"alice": 0, "bob": 0, "dave": 1}
    assert annotators["bob"]["active"] is False and annotators["alice"]["assigned"] > 1
    opens = re.findall(r'<td data-testid="open">(\d+)</td>', dashboard)
    assert sorted(map(int, opens)) == [0, 0, 1] and "(deactivated)" in dashboard


def _token(client: Browserless, name: str) -> str:
    created = client.form_post("/account/tokens", {"name": name})
    match = _TOKEN.search(created.text)
    assert match, created.text[-300:]
    return match.group(1)


def _works(server: LiveServer, token: str) -> bool:
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as script:
        status = script.get("/api/me").status_code
    assert status in (200, 401)
    return status == 200


def test_a_password_change_or_reset_revokes_api_tokens_unless_asked_not_to(
    env: Env, server: LiveServer
) -> None:
    alice = Browserless(server.url, "alice", password_of("alice"))
    root = Browserless(server.url, "root", password_of("root"))
    try:
        first, second = _token(alice, "nightly"), _token(alice, "sync")
        page = alice.client.get("/account/password").text
        assert "revokes your 2 API token(s)" in page and 'name="keep_tokens"' in page
        changed = alice.form_post("/account/password", {"current": password_of("alice"), "new": "a new passphrase",
                                                        "confirm": "a new passphrase"})  # fmt: skip
        assert changed.status_code == 303
        notice = alice.client.get(changed.headers["location"]).text
        assert "your 2 API token(s) revoked" in notice
        assert not _works(server, first) and not _works(server, second)
        # Asked to keep them (the box is not ticked by default): they keep working.
        kept = _token(alice, "kept")
        alice.form_post("/account/password", {"current": "a new passphrase", "new": "another passphrase",
                                              "confirm": "another passphrase", "keep_tokens": "1"})  # fmt: skip
        assert _works(server, kept)
        # An admin's reset revokes them too, and says so on the users page.
        users_page = root.client.get("/admin/users").text
        assert "also revokes their 1 API token(s)" in users_page
        reset = root.form_post("/admin/users/alice/password", {"password": "reset by root 1"})
        assert "their 1 API token(s) were revoked" in root.client.get(reset.headers["location"]).text
        assert not _works(server, kept)
    finally:
        alice.close()
        root.close()
    # The command line: revoked by default, kept with --keep-tokens.
    bob = Browserless(server.url, "bob", password_of("bob"))
    try:
        token = _token(bob, "cli")
    finally:
        bob.close()
    runner = CliRunner()
    kept_run = runner.invoke(platform_app, ["user", "passwd", "bob", "--password-stdin", "--keep-tokens",
                                            "--db", env.url], input="kept token pw\n")  # fmt: skip
    assert kept_run.exit_code == 0 and "API tokens kept" in kept_run.output and _works(server, token)
    revoked_run = runner.invoke(platform_app, ["user", "passwd", "bob", "--password-stdin", "--db", env.url],
                                input="revoked token pw\n")  # fmt: skip
    assert revoked_run.exit_code == 0 and "1 API token(s) revoked" in revoked_run.output
    assert not _works(server, token)
