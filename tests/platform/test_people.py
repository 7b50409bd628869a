"""People join, leave and change roles: deactivation and reassignment hand open items to other
annotators under the double-blind rules; passwords are changed and reset; roles and disciplines edited."""

from __future__ import annotations

import httpx
from platform_env import Env, LiveServer, add_users, decide, password_of
from platform_http import Browserless, csrf_from
from sqlalchemy import func, select, update

from expvid.platform.db.models import Assignment, AuditEvent, Decision, Item, ReleasedAssignment, User
from expvid.platform.services.assignment import assign_pending
from expvid.platform.services.settlement import reopen_for_review


def _holders(env: Env, key: str) -> set[str]:
    with env.database.read() as db:
        return set(
            db.scalars(
                select(User.username)
                .join(Assignment, Assignment.user_id == User.id)
                .where(Assignment.item_id == env.item_id(key))
            )
        )


def _open_biology(env: Env) -> list[Item]:
    with env.database.read() as db:
        return list(
            db.scalars(
                select(Item).where(Item.discipline == "Biology", Item.state.in_(("pending", "in_review")))
            )
        )


def test_deactivating_an_annotator_returns_their_open_items_to_eligible_others(
    env: Env, server: LiveServer
) -> None:
    env.users |= add_users(env.database, {"erin": ("annotator", ["Biology"])})
    decide(env, "bob", "tools/0", "approve")  # bob's decided work stays his
    before = env.item("materials/0")
    root = Browserless(server.url, "root", password_of("root"))
    bob = Browserless(server.url, "bob", password_of("bob"))
    try:
        response = root.form_post("/admin/users/bob/active", {"active": "0"})
        assert response.status_code == 303
        notice = root.client.get(response.headers["location"]).text
        assert "bob deactivated: 9 open item(s) returned to the pool, 9 reassigned" in notice
        assert bob.client.get("/api/me").status_code == 401  # signed out
    finally:
        root.close()
        bob.close()
    open_items = _open_biology(env)
    assert len(open_items) == 10
    for item in open_items:
        holders = _holders(env, item.release_key)
        expected = {"alice", "bob"} if item.release_key == "tools/0" else {"alice", "erin"}
        assert holders == expected, item.release_key
        assert item.short_of_annotators == 0
    # The other annotator's open page stays valid: the item's version did not move.
    assert env.item("materials/0").version == before.version
    with env.database.read() as db:
        released = db.scalar(select(func.count()).select_from(ReleasedAssignment))
        events = db.scalar(select(func.count()).where(AuditEvent.action == "assignment.released"))
        decisions = list(db.scalars(select(Decision).where(Decision.user_id == env.users["bob"])))
    assert released == events == 9 and [d.item_id for d in decisions] == [env.item_id("tools/0")]
    # erin takes over: her decision and alice's settle the item as usual.
    decide(env, "alice", "materials/0", "approve")
    assert decide(env, "erin", "materials/0", "approve").item_state == "verified"


def test_reassignment_never_hands_an_item_to_someone_who_decided_it(env: Env, server: LiveServer) -> None:
    env.users |= add_users(env.database, {"erin": ("annotator", ["Biology"])})
    decide(env, "alice", "materials/0", "approve")
    decide(env, "bob", "materials/0", "reject")  # conflict...
    with env.database.write() as db:
        item = db.get(Item, env.item_id("materials/0"))
        assert item is not None
        reopen_for_review(db, env.actor("root"), item, reason="the clip was cut wrongly")  # ...sent back
    root = Browserless(server.url, "root", password_of("root"))
    try:
        # bob (still active) hands over his open work: erin gets it, including the reopened item.
        response = root.form_post("/admin/users/bob/reassign", {"reason": "bob is on leave"})
        assert (
            "10 open item(s) returned to the pool, 10 reassigned"
            in root.client.get(response.headers["location"]).text
        )
        assert _holders(env, "materials/0") == {"alice", "erin"}
        # erin hands hers over too: bob gave them back (and decided one), alice has them: nobody is left,
        # and the items are listed as short of an annotator instead of waiting in silence.
        assert root.form_post("/admin/users/erin/reassign", {}).status_code == 303
        assert all(_holders(env, i.release_key) == {"alice"} for i in _open_biology(env))
        short = env.item("materials/0")
        assert (short.state, short.short_of_annotators) == ("in_review", 1)
        dashboard = root.client.get("/dashboard").text
        section = dashboard[dashboard.index('data-testid="short-of-annotators"') :]
        assert "Biology" in section.split("</table>")[0]
        with env.database.write() as db:
            assert assign_pending(db).short_of_annotators == {
                "Biology": 10,
                "Chemistry": 1,
            }  # bob: never again
        # An admin may still choose someone explicitly, but never someone who decided the item.
        refused = root.form_post(f"/admin/items/{short.id}/annotators", {"username": "bob"})
        assert refused.status_code == 422 and "already decided this item" in refused.text
        assert (
            root.form_post(
                f"/admin/items/{env.item_id('tools/1')}/annotators", {"username": "bob"}
            ).status_code
            == 303
        )
        assert _holders(env, "tools/1") == {"alice", "bob"}
    finally:
        root.close()
    env.users |= add_users(env.database, {"frank": ("annotator", [])})
    with env.database.write() as db:
        assert assign_pending(db).short_of_annotators == {}
    assert _holders(env, "materials/0") == {"alice", "frank"}
    with env.database.read() as db:
        stale = list(db.scalars(select(Decision).where(Decision.item_id == short.id)))
    assert len(stale) == 2 and all(d.stale for d in stale)  # the history is kept


def test_items_stranded_by_an_earlier_deactivation_are_released(env: Env, server: LiveServer) -> None:
    """A database from before releases: bob was deactivated and his items stayed in review with him.
    The admin's "add annotator" used to answer 409; an assignment run gave them to nobody."""
    env.users |= add_users(env.database, {"erin": ("annotator", ["Biology"])})
    with env.database.write() as db:
        db.execute(update(User).where(User.username == "bob").values(active=False))
    item_id = env.item_id("tools/1")
    root = Browserless(server.url, "root", password_of("root"))
    try:
        response = root.form_post(f"/admin/items/{item_id}/annotators", {"username": "erin"})
        assert response.status_code == 303, response.text[-300:]
        assert _holders(env, "tools/1") == {"alice", "erin"}
        response = root.form_post("/admin/assign", {})
        assert response.status_code == 303
    finally:
        root.close()
    for item in _open_biology(env):
        assert _holders(env, item.release_key) == {"alice", "erin"}, item.release_key


def test_role_and_discipline_edits(env: Env, server: LiveServer) -> None:
    env.users |= add_users(env.database, {"erin": ("annotator", ["Biology"])})
    root = Browserless(server.url, "root", password_of("root"))
    try:
        page = root.client.get("/admin/users").text
        row = page[page.index('data-user="alice"') :].split("</tr>")[0]
        assert 'data-testid="open-items">10' in row and "/admin/users/alice/reassign" in row
        response = root.form_post(
            "/admin/users/alice/edit", {"role": "adjudicator", "disciplines": "Biology, Genetics"}
        )
        assert response.status_code == 303
        assert "returned to the pool" in root.client.get(response.headers["location"]).text
        response = root.form_post("/admin/users/dave/edit", {"role": "annotator", "disciplines": ""})
        assert response.status_code == 303
        refused = root.form_post("/admin/users/root/edit", {"role": "annotator", "disciplines": ""})
        assert refused.status_code == 422 and "last active admin" in refused.text
        assert root.form_post("/admin/users/nobody/edit", {"role": "admin"}).status_code == 404
    finally:
        root.close()
    with env.database.read() as db:
        alice = db.scalar(select(User).where(User.username == "alice"))
        dave = db.scalar(select(User).where(User.username == "dave"))
    assert alice is not None and (alice.role, alice.disciplines) == ("adjudicator", ["Biology", "Genetics"])
    assert dave is not None and dave.disciplines == []
    for item in _open_biology(env):  # alice's items went to erin (and dave, who now reviews any discipline)
        holders = _holders(env, item.release_key)
        assert "alice" not in holders and len(holders) == 2, (item.release_key, holders)


def _sign_in(base_url: str, username: str, password: str) -> httpx.Response:
    with httpx.Client(base_url=base_url, follow_redirects=False) as client:
        token = csrf_from(client.get("/login").text)
        return client.post("/login", data={"username": username, "password": password, "csrf_token": token})


def test_passwords_are_changed_by_their_owner_and_reset_by_an_admin(env: Env, server: LiveServer) -> None:
    alice = Browserless(server.url, "alice", password_of("alice"))
    other_tab = Browserless(server.url, "alice", password_of("alice"))
    root = Browserless(server.url, "root", password_of("root"))
    try:
        assert 'name="current"' in alice.client.get("/account/password").text
        wrong = alice.form_post("/account/password", {"current": "not it at all", "new": "a new passphrase",
                                                      "confirm": "a new passphrase"})  # fmt: skip
        assert wrong.status_code == 422 and "current password is not right" in wrong.text
        mismatch = alice.form_post("/account/password", {"current": password_of("alice"), "new": "a new passphrase",
                                                         "confirm": "another one!"})  # fmt: skip
        assert mismatch.status_code == 422 and "confirmation differ" in mismatch.text
        done = alice.form_post("/account/password", {"current": password_of("alice"), "new": "a new passphrase",
                                                     "confirm": "a new passphrase"})  # fmt: skip
        assert done.status_code == 303
        assert alice.client.get("/api/me").status_code == 200  # this session stays...
        assert other_tab.client.get("/api/me").status_code == 401  # ...the others end
        assert _sign_in(server.url, "alice", password_of("alice")).status_code == 401
        assert _sign_in(server.url, "alice", "a new passphrase").status_code == 303

        short = root.form_post("/admin/users/alice/password", {"password": "short"})
        assert short.status_code == 422 and "at least 8 characters" in short.text
        reset = root.form_post("/admin/users/alice/password", {"password": "set by the admin"})
        assert reset.status_code == 303
        assert alice.client.get("/api/me").status_code == 401
        assert _sign_in(server.url, "alice", "set by the admin").status_code == 303
        assert (
            root.form_post("/admin/users/alice/password", {"password": "x" * 20}, csrf=False).status_code
            == 403
        )
    finally:
        for client in (alice, other_tab, root):
            client.close()
    with env.database.read() as db:
        actions = list(db.scalars(select(AuditEvent.action).where(AuditEvent.entity == "user")))
    assert "user.password_changed" in actions and "user.password_reset" in actions
