"""Double annotation, settlement, adjudication and optimistic locking, through the services."""

from __future__ import annotations

import pytest
from platform_candidates import FULL_STEPS
from platform_env import EDITED_TOOLS, Env, add_users, decide
from sqlalchemy import func, select

from expvid.platform.db.models import (
    Adjudication,
    Assignment,
    AuditEvent,
    Decision,
    Experiment,
    Item,
    Segment,
)
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.authoring import create_level3_question
from expvid.platform.services.content import Content
from expvid.platform.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from expvid.platform.services.level2 import StepRow, rows_from_steps
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.platform.services.settlement import reopen_for_review, segment_steps


def test_each_item_has_two_annotators_of_its_discipline(env: Env) -> None:
    with env.database.read() as db:
        rows = db.execute(
            select(Item.release_key, Item.state, func.count(Assignment.id))
            .outerjoin(Assignment)
            .group_by(Item.id)
        ).all()
        owners = {
            (key, user)
            for key, user in db.execute(
                select(Item.release_key, Assignment.user_id).join(Assignment, Assignment.item_id == Item.id)
            )
        }
    by_key = {key: (state, n) for key, state, n in rows}
    assert by_key["tools/2"] == ("pending", 1)  # Chemistry: only dave is eligible
    assert ("tools/2", env.users["dave"]) in owners
    for key, (state, n) in by_key.items():
        if key != "tools/2":
            assert (state, n) == ("in_review", 2), key
            assert {(key, env.users["alice"]), (key, env.users["bob"])} <= owners


def test_two_approvals_settle_the_item_automatically(env: Env) -> None:
    first = decide(env, "alice", "materials/0", "approve")
    assert first.item_state == "in_review"
    second = decide(env, "bob", "materials/0", "approve")
    assert second.item_state == "verified"
    item = env.item("materials/0")
    assert (item.state, item.settled_via) == ("verified", "agreement")
    with env.database.read() as db:
        actions = list(
            db.scalars(select(AuditEvent.action).where(AuditEvent.item_id == item.id).order_by(AuditEvent.id))
        )
        open_assignments = db.scalar(
            select(func.count()).where(Assignment.item_id == item.id, Assignment.completed_at.is_(None))
        )
    assert actions[-3:] == ["decision.created", "decision.created", "item.verified"]
    assert open_assignments == 0


def test_two_rejections_reject_and_identical_edits_apply(env: Env) -> None:
    decide(env, "alice", "tools/1", "reject")
    assert decide(env, "bob", "tools/1", "reject").item_state == "rejected"
    decide(env, "alice", "tools/0", "edit", content=EDITED_TOOLS)
    whitespace_variant = Content(EDITED_TOOLS.question + "  ", dict(EDITED_TOOLS.options or {}), "C")
    assert decide(env, "bob", "tools/0", "edit", content=whitespace_variant).item_state == "verified"
    item = env.item("tools/0")
    assert item.options == EDITED_TOOLS.options
    assert item.record["options"]["C"] == "Petri dish"  # the imported record is kept for provenance


def test_disagreement_goes_to_adjudication_with_sources_hidden(env: Env) -> None:
    decide(env, "alice", "tools/0", "edit", content=EDITED_TOOLS, justification="the dish has a glass bottom")
    assert (
        decide(env, "bob", "tools/0", "approve", justification="a petri dish is visible").item_state
        == "conflict"
    )
    item = env.item("tools/0")
    with env.database.read() as db:
        view = adjudication_view(db, env.actor("carol"), item.id)
    assert len(view.versions) == 2
    assert sorted(v.label for v in view.versions) == [1, 2]
    assert {v.content["options"]["C"] for v in view.versions} == {"Petri dish", "Glass-bottom Petri dish"}
    stances = sorted((j.stance, j.version_label) for j in view.judgements)
    assert stances == [("accepts", 1), ("accepts", 2)]
    assert {j.justification for j in view.judgements} == {
        "the dish has a glass bottom",
        "a petri dish is visible",
    }
    rendered = repr(view)
    assert "alice" not in rendered and "bob" not in rendered  # no names reach the adjudicator

    edited_label = next(v.label for v in view.versions if v.content["options"]["C"].startswith("Glass"))
    chosen = next(v for v in view.versions if v.label == edited_label)
    with env.database.write() as db:
        resolve(
            db, env.actor("carol"), item.id,
            Resolution("verified", "glass bottom is visible at 0:02", view.item_version, Content.from_dict(chosen.content)),
        )  # fmt: skip
    item = env.item("tools/0")
    assert (item.state, item.settled_via, item.options) == ("verified", "adjudication", EDITED_TOOLS.options)
    with env.database.read() as db:
        adjudication = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id))
        alice_decision = db.scalar(
            select(Decision.id).where(Decision.item_id == item.id, Decision.user_id == env.users["alice"])
        )
    assert adjudication is not None and adjudication.matched_decisions == [alice_decision]


def test_adjudication_is_for_adjudicators_of_conflicts_only(env: Env) -> None:
    item = env.item("materials/0")
    with env.database.read() as db, pytest.raises(NotFound):
        adjudication_view(db, env.actor("carol"), item.id)  # not in conflict
    decide(env, "alice", "materials/0", "approve")
    decide(env, "bob", "materials/0", "reject")
    with env.database.read() as db, pytest.raises(Forbidden):
        adjudication_view(db, env.actor("alice"), item.id)
    with env.database.write() as db, pytest.raises(InvalidInput, match="justification"):
        resolve(db, env.actor("carol"), item.id, Resolution("rejected", "", env.item("materials/0").version))
    with env.database.write() as db, pytest.raises(Conflict):
        resolve(db, env.actor("carol"), item.id, Resolution("rejected", "not visible", 1))
    with env.database.write() as db:
        resolve(
            db,
            env.actor("carol"),
            item.id,
            Resolution("rejected", "vitronectin is not visible", env.item("materials/0").version),
        )
    assert env.item("materials/0").state == "rejected"


def test_stale_versions_are_refused_not_overwritten(env: Env) -> None:
    item = env.item("tools/0")
    first = decide(env, "alice", "tools/0", "approve", justification="first tab")
    # A second tab still shows "no decision yet" (decision version 0): refused.
    with pytest.raises(Conflict, match="another page"):
        decide(env, "alice", "tools/0", "reject", decision_version=0, justification="second tab")
    # Revising from the current decision works and keeps one row.
    revised = decide(
        env,
        "alice",
        "tools/0",
        "reject",
        decision_version=first.decision_version,
        justification="on reflection",
    )
    assert revised.decision_version == 2
    with env.database.read() as db:
        rows = list(db.scalars(select(Decision).where(Decision.item_id == item.id)))
    assert [(r.verdict, r.justification, r.version) for r in rows] == [("reject", "on reflection", 2)]
    # A save against an outdated item version is refused as well.
    with pytest.raises(Conflict, match="changed since you opened it"):
        decide(env, "bob", "tools/0", "approve", item_version=item.version - 1)


def test_bad_decisions_are_explained(env: Env) -> None:
    with pytest.raises(InvalidInput, match="justification"):
        decide(env, "alice", "tools/0", "approve", justification="  ")
    with pytest.raises(InvalidInput, match="nothing was changed"):
        item = env.item("tools/0")
        decide(env, "alice", "tools/0", "edit", content=Content(item.question, item.options, item.answer))
    with pytest.raises(InvalidInput, match="exactly 4 options"):
        decide(env, "alice", "tools/0", "edit", content=Content("Which tool?", {"A": "x", "B": "y"}, "A"))
    with pytest.raises(NotFound):
        decide(env, "dave", "tools/0", "approve")  # not assigned to dave
    with pytest.raises(Forbidden):
        decide(env, "carol", "tools/0", "approve") if False else _adjudicator_decides(env)


def _adjudicator_decides(env: Env) -> None:
    item = env.item("tools/0")
    with env.database.write() as db:
        submit_decision(db, env.actor("carol"), item.id, DecisionInput("approve", "looks fine", item.version))


def test_closed_items_cannot_be_decided_again(env: Env) -> None:
    decide(env, "alice", "materials/0", "approve")
    decide(env, "bob", "materials/0", "approve")
    with pytest.raises(Conflict, match="closed for review"):
        decide(env, "alice", "materials/0", "reject")


def test_admin_reopens_a_settled_item_and_decisions_become_stale(env: Env) -> None:
    decide(env, "alice", "materials/0", "approve")
    decide(env, "bob", "materials/0", "approve")
    with env.database.write() as db:
        item = db.scalar(select(Item).where(Item.release_key == "materials/0"))
        assert item is not None
        assert reopen_for_review(db, env.actor("root"), item, reason="distractor B is wrong") == 2
    item = env.item("materials/0")
    assert item.state == "in_review"
    with env.database.read() as db:
        assert all(d.stale for d in db.scalars(select(Decision).where(Decision.item_id == item.id)))
    assert decide(env, "alice", "materials/0", "approve").item_state == "in_review"
    assert decide(env, "bob", "materials/0", "approve").item_state == "verified"


def test_level2_step_edit_rebuilds_every_derived_question(env: Env) -> None:
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
        assert segment is not None
        rows = rows_from_steps(segment_steps(segment))
    rows[0] = StepRow(3, rows[0].text, 1.0, 1.6)
    rows[1] = StepRow(4, "Rinse the well twice with 1 mL PBS", 2.0, 3.0)
    rows.insert(1, StepRow(None, "Tilt the plate to drain", 1.6, 2.0))
    # Someone already judged a sibling: that judgement is about a list that is about to change.
    decide(env, "alice", "step_prediction/0", "approve")
    before_pred = env.item("step_prediction/0")

    decide(env, "alice", "sequence_generation/0", "edit", rows=rows)
    result = decide(env, "bob", "sequence_generation/0", "edit", rows=list(rows))
    assert result.item_state == "verified"

    gen = env.item("sequence_generation/0")
    assert gen.answer == ["3", "4", "5", "6"]
    assert "4. Tilt the plate to drain\n5. Rinse the well twice with 1 mL PBS" in gen.question
    other = env.item("sequence_generation/1")  # segment 2: numbers shifted by the insertion
    assert other.answer == ["6", "7"]
    assert other.state == "in_review" and other.version > 2
    pred = env.item("step_prediction/0")
    assert pred.answer == 6 and pred.version > before_pred.version
    verif = env.item("video_verification/0")
    assert verif.options == {"A": "1", "B": "2", "C": "3", "D": "4"} and verif.answer == "C"
    ordering = env.item("sequence_ordering/0")
    assert ordering.options is not None and "Tilt the plate to drain" in ordering.options[ordering.answer]
    with env.database.read() as db:
        experiment = db.scalar(select(Experiment).where(Experiment.video_id == "E1"))
        stale = db.scalar(
            select(Decision).where(Decision.item_id == pred.id, Decision.user_id == env.users["alice"])
        )
        reopened = db.scalar(
            select(Assignment).where(Assignment.item_id == pred.id, Assignment.user_id == env.users["alice"])
        )
    assert experiment is not None and experiment.full_steps[3] == "Tilt the plate to drain"
    assert len(experiment.full_steps) == len(FULL_STEPS) + 1 and experiment.steps_version == 2
    assert stale is not None and stale.stale
    assert reopened is not None and reopened.completed_at is None
    # The old judgement of the sibling can no longer be used against the new version.
    with pytest.raises(Conflict):
        decide(env, "bob", "step_prediction/0", "approve", item_version=before_pred.version)


def test_level2_edit_that_breaks_a_sibling_sends_it_to_adjudication(env: Env) -> None:
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
        assert segment is not None
        rows = [
            r for r in rows_from_steps(segment_steps(segment)) if r.ref != 4
        ]  # step 4 is cut from the clip
    with pytest.raises(InvalidInput, match="cannot be rebuilt"):
        decide(env, "alice", "video_verification/0", "edit", rows=rows)
    with pytest.raises(InvalidInput, match="only 1 wrong ordering"):
        decide(env, "alice", "sequence_ordering/0", "edit", rows=rows)  # two steps cannot make four options
    decide(env, "alice", "sequence_generation/0", "edit", rows=rows, justification="step 4 is not visible")
    assert decide(env, "bob", "sequence_generation/0", "edit", rows=rows).item_state == "verified"
    assert env.item("sequence_generation/0").answer == ["3", "5"]
    for key in ("video_verification/0", "sequence_ordering/0"):
        broken = env.item(key)
        assert broken.state == "conflict", key
        assert any(f["kind"] == "rebuild_failed" for f in broken.flags), key


def test_level2_edit_without_change_is_refused(env: Env) -> None:
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
        assert segment is not None
        rows = rows_from_steps(segment_steps(segment))
    with pytest.raises(InvalidInput, match="unchanged"):
        decide(env, "alice", "sequence_generation/0", "edit", rows=rows)


def test_new_level3_question_never_goes_to_its_author(env: Env) -> None:
    env.users.update(add_users(env.database, {"erin": ("annotator", [])}))
    with env.database.write() as db:
        item = create_level3_question(
            db, env.actor("alice"), video_id="E1", task="scientific_discovery",
            question="Imaging at ____ °C keeps cells alive for ____ hours.", answers=["37", "12"],
            justification="Results section, stage temperature",
        )  # fmt: skip
        key, identity = item.release_key, item.key
    created = env.item(key)
    assert key == "scientific_discovery/1" and created.creator == "alice" and created.state == "in_review"
    assert identity == "platform:scientific_discovery/1"  # never "removed upstream" by an import
    with env.database.read() as db:
        owners = set(db.scalars(select(Assignment.user_id).where(Assignment.item_id == created.id)))
    assert owners == {env.users["bob"], env.users["erin"]}
    with env.database.write() as db, pytest.raises(InvalidInput, match="2 blank"):
        create_level3_question(
            db, env.actor("alice"), video_id="E1", task="scientific_discovery",
            question="Imaging at ____ °C for ____ hours.", answers=["37"], justification="Results section",
        )  # fmt: skip
    with env.database.write() as db, pytest.raises(NotFound):
        create_level3_question(
            db, env.actor("dave"), video_id="E1", task="scientific_discovery",
            question="A ____ one.", answers=["x"], justification="not my experiment",
        )  # fmt: skip
