"""Workflow gaps: items short of annotators, a rejection that keeps a step-list correction, the
adjudicator's view of derived questions and own edits, searching the items list, and progress over time."""

from __future__ import annotations

from datetime import timedelta

import pytest
from platform_env import Env, LiveServer, decide, password_of
from platform_http import Browserless
from sqlalchemy import select

from expvid.platform.db.models import Adjudication, AuditEvent, Experiment, Segment
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.assignment import add_annotator, assign_pending
from expvid.platform.services.errors import Conflict, Forbidden, InvalidInput
from expvid.platform.services.level2 import StepRow, rows_from_steps
from expvid.platform.services.reports import activity
from expvid.platform.services.search import ItemFilters, search_items
from expvid.platform.services.settlement import segment_steps


def _segment_rows(env: Env, key: str = "E1/seg_1") -> list[StepRow]:
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == key))
        assert segment is not None
        return rows_from_steps(segment_steps(segment))


def test_items_short_of_annotators_are_flagged_listed_and_staffed_by_an_admin(
    env: Env, server: LiveServer
) -> None:
    chemistry = env.item("tools/2")  # only dave reviews Chemistry
    assert (chemistry.state, chemistry.short_of_annotators) == ("pending", 1)
    with env.database.read() as db:
        flagged = db.scalar(select(AuditEvent).where(AuditEvent.action == "assignment.short"))
    assert flagged is not None and flagged.after["short_of_annotators"] == 1
    with env.database.write() as db:
        assert assign_pending(db).short_of_annotators == {"Chemistry": 1}  # still short; not audited twice
    with env.database.read() as db:
        assert len(list(db.scalars(select(AuditEvent).where(AuditEvent.action == "assignment.short")))) == 1

    root = Browserless(server.url, "root", password_of("root"))
    try:
        dashboard = root.client.get("/dashboard").text
        section = dashboard[dashboard.index('data-testid="short-of-annotators"') :]
        assert 'data-discipline="Chemistry"' in section and "tools/2" in section
        assert (
            '<optgroup label="reviews Chemistry"><option>dave</option>' not in section
        )  # dave is on it already
        page = root.client.get(f"/items/{chemistry.id}").text
        assert "short of 1 annotator(s)" in page and "<option>alice</option>" in page
        added = root.form_post(
            "/admin/short-items/annotators", {"username": "alice", "discipline": "Chemistry"}
        )
        assert added.status_code == 303 and "alice%20added" in added.headers["location"]
    finally:
        root.close()
    staffed = env.item("tools/2")
    assert (staffed.state, staffed.short_of_annotators) == ("in_review", 0)
    with env.database.read() as db:
        event = db.scalars(
            select(AuditEvent).where(
                AuditEvent.item_id == staffed.id, AuditEvent.action == "assignment.created"
            )
        ).all()[-1]
    assert event.after == {"user": "alice", "slot": 2, "added_by_admin": True, "outside_disciplines": True}
    assert decide(env, "alice", "tools/2", "approve").item_state == "in_review"
    assert decide(env, "dave", "tools/2", "approve").item_state == "verified"  # it settles now

    with env.database.write() as db, pytest.raises(Conflict, match="this item is verified"):
        add_annotator(db, env.actor("root"), staffed.id, "bob")
    with env.database.write() as db, pytest.raises(Forbidden):
        add_annotator(db, env.actor("carol"), env.item_id("tools/0"), "dave")
    with env.database.write() as db, pytest.raises(Conflict, match="all its annotators"):
        add_annotator(db, env.actor("root"), env.item_id("tools/0"), "dave")
    with env.database.write() as db, pytest.raises(InvalidInput, match="not an active annotator"):
        add_annotator(db, env.actor("root"), env.item_id("tools/0"), "carol")


def test_a_correction_that_leaves_the_question_impossible_is_kept_with_a_rejection(env: Env) -> None:
    # Step 4 is not in the clip: with two steps left, an ordering question cannot have four options.
    rows = [r for r in _segment_rows(env) if r.ref != 4]
    with pytest.raises(InvalidInput) as caught:
        decide(env, "alice", "sequence_ordering/0", "edit", rows=rows)
    assert caught.value.code == "cannot_rebuild" and "choose \u201cReject\u201d" in caught.value.problems[0]
    decide(env, "alice", "sequence_ordering/0", "reject", rows=rows, justification="step 4 is not shown")
    result = decide(
        env, "bob", "sequence_ordering/0", "reject", rows=list(rows), justification="no rinse visible"
    )
    assert result.item_state == "rejected"
    # The agreed correction reached the segment's other questions (the rejected one is left alone).
    assert env.item("sequence_generation/0").answer == ["3", "5"]
    assert (
        env.item("sequence_ordering/0").question
        == "What is the correct sequence of steps shown in the video?"
    )
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
    assert segment is not None and [s["number"] for s in segment.steps] == [3, 5]


def test_rejections_with_different_corrections_go_to_an_adjudicator_who_chooses_one(env: Env) -> None:
    without_4 = [r for r in _segment_rows(env) if r.ref != 4]
    decide(env, "alice", "sequence_ordering/0", "reject", rows=without_4, justification="step 4 is not shown")
    assert (
        decide(env, "bob", "sequence_ordering/0", "reject", justification="distractors are odd").item_state
        == "conflict"
    )
    item = env.item("sequence_ordering/0")
    with env.database.read() as db:
        view = adjudication_view(db, env.actor("carol"), item.id)
    assert sorted(j.stance for j in view.judgements) == ["rejects", "rejects"]
    correction = next(v for v in view.versions if v.content is None)  # the list this question cannot have
    assert [r["ref"] for r in correction.rows] == [3, 5]
    assert any(j.version_label == correction.label for j in view.judgements)
    derived = {d.key: d for d in correction.derived}
    assert derived["sequence_ordering/0"].content is None and "wrong ordering" in (
        derived["sequence_ordering/0"].problem or ""
    )
    assert derived["sequence_generation/0"].content is not None
    assert derived["sequence_generation/0"].content["answer"] == ["3", "5"]
    with env.database.write() as db:
        resolve(db, env.actor("carol"), item.id,
                Resolution("rejected", "rinse is off camera", view.item_version,
                           rows=[StepRow.from_dict(r) for r in correction.rows]))  # fmt: skip
    assert env.item("sequence_ordering/0").state == "rejected"
    assert env.item("sequence_generation/0").answer == ["3", "5"]
    with env.database.read() as db:
        call = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id))
    assert call is not None and call.own_edit is False and call.content == {"steps": correction.rows}


def test_the_adjudicator_sees_derived_questions_and_own_edits_are_applied_and_recorded(env: Env) -> None:
    rows = _segment_rows(env)
    rows[1] = StepRow(4, "Rinse the well twice with 1 mL PBS", 2.0, 3.0)
    decide(env, "alice", "sequence_generation/0", "edit", rows=rows)
    assert decide(env, "bob", "sequence_generation/0", "approve").item_state == "conflict"
    item = env.item("sequence_generation/0")
    with env.database.read() as db:
        view = adjudication_view(db, env.actor("carol"), item.id)
    assert len(view.versions) == 2
    for version in view.versions:
        keys = [d.key for d in version.derived]
        assert keys == [
            "sequence_ordering/0",
            "sequence_generation/0",
            "step_prediction/0",
            "video_verification/0",
        ]
        ordering = next(d for d in version.derived if d.key == "sequence_ordering/0")
        assert ordering.content is not None and len(ordering.content["options"]) == 4
    edited = next(v for v in view.versions if "1 mL" in v.rows[1]["text"])
    ordering = next(d for d in edited.derived if d.key == "sequence_ordering/0")
    assert (
        ordering.content is not None and "1 mL PBS" in ordering.content["options"][ordering.content["answer"]]
    )

    mine = [StepRow.from_dict(r) for r in edited.rows]
    mine[1] = StepRow(4, "Rinse the well twice with 1 mL warm PBS", 2.0, 3.0)
    with env.database.write() as db:
        resolve(
            db,
            env.actor("carol"),
            item.id,
            Resolution("verified", "warm PBS is on the label", view.item_version, rows=mine),
        )
    settled = env.item("sequence_generation/0")
    assert settled.state == "verified" and "4. Rinse the well twice with 1 mL warm PBS" in settled.question
    with env.database.read() as db:
        call = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id))
        experiment = db.scalar(select(Experiment).where(Experiment.video_id == "E1"))
        recorded = db.scalar(
            select(AuditEvent).where(
                AuditEvent.item_id == item.id, AuditEvent.action == "adjudication.recorded"
            )
        )
    assert call is not None and call.own_edit is True and call.matched_decisions == []
    assert experiment is not None and experiment.full_steps[3] == "Rinse the well twice with 1 mL warm PBS"
    assert recorded is not None and recorded.after["own_edit"] is True
    assert recorded.after["content"]["steps"][1]["text"] == "Rinse the well twice with 1 mL warm PBS"


def test_searching_and_filtering_items(env: Env, server: LiveServer) -> None:
    def keys(**filters: str) -> list[str]:
        with env.database.read() as db:
            items, total = search_items(db, ItemFilters(**filters), offset=0, limit=100)
        assert total == len(items)
        return sorted(i.release_key for i in items)

    assert keys(q="glassware") == ["tools/2"]
    assert keys(q="TOOLS/") == ["tools/0", "tools/1", "tools/2"]  # case-insensitive, item keys too
    assert keys(q="100%_") == []  # LIKE wildcards are taken literally
    assert keys(flag="asr_leakage") == ["tools/0"]
    assert keys(flag="blind_answerable", task="materials") == ["materials/0"]
    assert keys(flag="short_of_annotators") == ["tools/2"]
    assert keys(reviewer="dave") == ["tools/2"]
    assert keys(discipline="Chemistry", state="pending") == ["tools/2"]
    assert len(keys(reviewer="alice", task="sequence_generation")) == 2

    root = Browserless(server.url, "root", password_of("root"))
    try:
        page = root.client.get("/items", params={"q": "coverslip", "flag": "", "reviewer": "bob"}).text
        rows = page[page.index('data-testid="items"') :]
        assert "tools/1" in rows and "materials/0" not in rows and "alice, bob" in rows
        assert 'value="coverslip"' in page  # the search box keeps the query
        assert root.client.get("/items", params={"flag": "asr_leakage"}).text.count("asr leakage</span>") == 1
    finally:
        root.close()


def test_progress_over_time_is_binned_by_hour_then_by_day(env: Env) -> None:
    decide(env, "alice", "tools/1", "approve")
    decide(env, "bob", "tools/1", "approve")
    with env.database.read() as db:
        today = activity(db)
        later = activity(db, now=today.starts[0] + timedelta(days=10))
    assert today.bin_hours == 1.0 and sum(today.decisions) == 2 and sum(today.verified) == 1
    assert today.cumulative(today.decisions)[-1] == 2 and today.total_items == 11
    assert later.bin_hours == 24.0 and len(later.starts) == 11 and sum(later.decisions) == 2
