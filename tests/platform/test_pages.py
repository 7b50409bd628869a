"""The server-rendered pages and their plain HTML forms (the paths that work without JavaScript)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from platform_env import Env, LiveServer, decide, password_of
from platform_http import Browserless
from sqlalchemy import select, update

from expvid.platform.db.models import Assignment, Decision, Item, User, utc_now
from expvid.platform.services.reports import agreement_report, progress


@pytest.fixture
def alice(server: LiveServer) -> Iterator[Browserless]:
    client = Browserless(server.url, "alice", password_of("alice"))
    yield client
    client.close()


def hidden(html: str, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert match, name
    return match.group(1)


def test_level3_page_shows_the_paper_and_checks_one_answer_per_blank(env: Env, alice: Browserless) -> None:
    item_id = env.item_id("experimental_conclusion/0")
    page = alice.client.get(f"/items/{item_id}").text
    assert "<h3>Results</h3>" in page and "extended to drug screening" in page
    assert 'src="/media/experiments/E1/full"' in page
    assert 'data-testid="blank-count">2<' in page
    form = {
        "verdict": "edit",
        "justification": "the stage temperature is the key result",
        "question": "Colonies on the ____ coating remained pluripotent for ____ hours at ____ °C.",
        "answers": "vitronectin\n12",
        "item_version": hidden(page, "item_version"),
        "decision_version": "0",
    }
    refused = alice.form_post(f"/items/{item_id}/decision", form)
    # POST-redirect-GET: the refusal sends the browser back to the item with the form kept as a draft.
    assert refused.status_code == 303 and refused.headers["location"].startswith(f"/items/{item_id}?draft=")
    shown = alice.client.get(refused.headers["location"])
    assert shown.status_code == 200
    assert "3 blank(s) but 2 answer(s)" in shown.text
    assert "at ____ °C." in shown.text and "the stage temperature is the key result" in shown.text  # kept
    assert alice.client.get(refused.headers["location"]).text == shown.text  # a reload shows it again
    saved = alice.form_post(f"/items/{item_id}/decision", {**form, "answers": "vitronectin\n12\n37"})
    assert saved.status_code == 303
    mine = alice.client.get(f"/api/items/{item_id}").json()["my_decision"]
    assert mine["proposal"]["answer"] == ["vitronectin", "12", "37"]


def test_approving_with_changed_content_is_refused(env: Env, alice: Browserless) -> None:
    item_id = env.item_id("materials/0")
    page = alice.client.get(f"/items/{item_id}").text
    form = {
        "verdict": "approve",
        "justification": "fine",
        "question": "What material is added to the well in this step?",
        "option_A": "Vitronectin solution",
        "option_B": "Trypsin",
        "option_C": "Ethanol (70 %)",
        "option_D": "Agarose gel",
        "answer": "A",
        "item_version": hidden(page, "item_version"),
    }
    refused = alice.form_post(f"/items/{item_id}/decision", form)
    assert refused.status_code == 303
    assert "choose edit to propose the change" in alice.client.get(refused.headers["location"]).text
    assert alice.client.get(f"/api/items/{item_id}").json()["my_decision"] is None


def test_step_table_form_removes_a_step(env: Env, alice: Browserless) -> None:
    item_id = env.item_id("sequence_generation/1")
    page = alice.client.get(f"/items/{item_id}").text
    assert 'data-testid="steps"' in page and "Place the chamber on the heated stage" in page
    data = {
        "verdict": "edit",
        "justification": "the chamber is placed off camera",
        "item_version": hidden(page, "item_version"),
        "step_ref": ["5", "6", ""],
        "step_text": ["Add 300 microliters of imaging medium", "Place the chamber on the heated stage", ""],
        "step_start": ["3.0", "4.0", ""],
        "step_end": ["4.0", "5.5", ""],
        "step_action": ["keep", "remove", "keep"],
        "csrf_token": alice.csrf,
    }
    assert alice.client.post(f"/items/{item_id}/decision", data=data).status_code == 303
    mine = alice.client.get(f"/api/items/{item_id}").json()["my_decision"]
    assert mine["proposal"]["answer"] == ["5"]
    assert [row["ref"] for row in mine["proposal"]["steps"]] == [5]
    bad = {**data, "step_start": ["x", "4.0", ""], "decision_version": "1"}
    response = alice.client.post(f"/items/{item_id}/decision", data=bad)
    assert response.status_code == 303
    assert "is not a time in seconds" in alice.client.get(response.headers["location"]).text


def test_writing_a_level3_question_through_the_form(env: Env, server: LiveServer, alice: Browserless) -> None:
    back = env.item_id("scientific_discovery/0")
    response = alice.form_post(
        "/experiments/E1/questions",
        {
            "task": "experimental_conclusion",
            "new_question": "Imaging every ____ minutes for ____ hours kept the colonies intact.",
            "new_answers": "10\n12",
            "new_justification": "Results: imaging schedule",
            "back_item": str(back),
        },
    )
    assert response.status_code == 303
    assert "new%20question%20experimental_conclusion/1%20created" in response.headers["location"]
    assert "experimental_conclusion/1 created" in alice.client.get(response.headers["location"]).text
    new_id = env.item_id("experimental_conclusion/1")
    assert alice.client.get(f"/items/{new_id}").status_code == 404  # never reviewed by its author
    bob = Browserless(server.url, "bob", password_of("bob"))
    try:
        assert bob.client.get(f"/items/{new_id}").status_code == 200
    finally:
        bob.close()
    bad = alice.form_post(
        "/experiments/E1/questions",
        {"task": "experimental_conclusion", "new_question": "No blanks here.", "new_answers": "x",
         "new_justification": "a try", "back_item": str(back)},
    )  # fmt: skip
    assert bad.status_code == 303 and bad.headers["location"].startswith(f"/items/{back}?draft=")
    shown = alice.client.get(bad.headers["location"]).text
    assert "no blank" in shown and "No blanks here." in shown


def test_admin_pages_users_reopen_and_dashboard(env: Env, server: LiveServer) -> None:
    root = Browserless(server.url, "root", password_of("root"))
    try:
        assert "materials/0" in root.client.get("/items?task=materials").text
        created = root.form_post(
            "/admin/users",
            {
                "username": "frank",
                "password": "frank-password",
                "role": "adjudicator",
                "disciplines": "Chemistry",
            },
        )
        assert created.status_code == 303
        assert "frank" in root.client.get("/admin/users").text
        duplicate = root.form_post(
            "/admin/users", {"username": "frank", "password": "another-pass", "role": "annotator"}
        )
        assert duplicate.status_code == 422 and "already exists" in duplicate.text
        assert root.form_post("/admin/users/frank/active", {"active": "0"}).status_code == 303
        with env.database.read() as db:
            frank = db.scalar(select(User).where(User.username == "frank"))
        assert frank is not None and not frank.active and frank.disciplines == ["Chemistry"]

        alice = Browserless(server.url, "alice", password_of("alice"))
        bob = Browserless(server.url, "bob", password_of("bob"))
        item_id = env.item_id("tools/1")
        assert alice.decide(item_id, "approve").status_code == 200
        assert bob.decide(item_id, "approve").json()["item_state"] == "verified"
        assert root.form_post(f"/admin/items/{item_id}/reopen", {"reason": "x"}).status_code == 422
        assert (
            root.form_post(f"/admin/items/{item_id}/reopen", {"reason": "wrong tool name"}).status_code == 303
        )
        assert env.item("tools/1").state == "in_review"
        assert alice.client.get("/").text.count("review again") == 1
        dashboard = root.client.get("/dashboard").text
        assert 'data-testid="items-left"><strong>11</strong>' in dashboard
        alice.close()
        bob.close()
    finally:
        root.close()


def test_progress_and_agreement_figures(env: Env) -> None:
    # Pretend alice opened her items ten minutes before deciding (time per item comes from this).
    with env.database.write() as db:
        db.execute(
            update(Assignment)
            .where(Assignment.user_id == env.users["alice"])
            .values(opened_at=utc_now() - timedelta(minutes=10))
        )
    decide(env, "alice", "tools/0", "approve")
    decide(env, "bob", "tools/0", "approve")
    decide(env, "alice", "tools/1", "approve")
    decide(env, "bob", "tools/1", "reject")
    decide(env, "alice", "materials/0", "reject")
    with env.database.read() as db:
        report = progress(db)
        figures = agreement_report(db)
        seconds = list(
            db.scalars(select(Decision.seconds_spent).where(Decision.user_id == env.users["alice"]))
        )
    assert all(s is not None and 590 < s < 700 for s in seconds)
    assert report.totals == {
        "pending": 1,
        "in_review": 8,
        "conflict": 1,
        "verified": 1,
        "rejected": 0,
        "removed": 0,
    }
    assert report.items_left == 10
    tools = next(row for row in report.by_group if row["task"] == "tools" and row["discipline"] == "Biology")
    assert (tools["verified"], tools["conflict"], tools["total"]) == (1, 1, 2)
    stats = {a.username: a for a in report.annotators}
    assert (stats["alice"].decided, stats["bob"].decided, stats["dave"].decided) == (3, 2, 0)
    assert stats["alice"].median_minutes is not None and 9.8 < stats["alice"].median_minutes < 11.7
    assert stats["bob"].median_minutes is None  # bob never opened a page: no time is invented
    assert figures.by_task["tools"].n == 2 and figures.by_task["tools"].percent == 50.0
    assert figures.by_pair[("alice", "bob")].n == 2
    assert "materials" not in figures.by_task  # one judgement only: no pair yet
    with env.database.read() as db:
        assert db.scalar(select(Item.state).where(Item.release_key == "tools/1")) == "conflict"
