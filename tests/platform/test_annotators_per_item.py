"""Annotators per item as a campaign setting (1-5; the paper's 2 by default): assignment fills every
slot, settlement waits for every judgement, adjudication shows them all, agreement uses multi-rater
statistics."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from platform_env import Env, add_users
from sqlalchemy import func, select
from typer.testing import CliRunner

from expvid.cli.platform import platform_app
from expvid.platform.db.models import Adjudication, Assignment, Decision, Item, User
from expvid.platform.services.adjudication import Resolution, adjudication_view, resolve
from expvid.platform.services.content import Content
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.reports import agreement_report
from expvid.platform.services.review import DecisionInput, submit_decision

runner = CliRunner()


def _assigned(env: Env, key: str) -> int:
    with env.database.read() as db:
        return int(db.scalar(select(func.count()).where(Assignment.item_id == env.item_id(key))) or 0)


def test_three_annotators_per_item_then_one(env: Env, candidates: Path, tmp_path: Path) -> None:
    # The fixture's items were imported with the default: two each.
    assert env.item("tools/0").annotators_required == 2 and _assigned(env, "tools/0") == 2
    shown = runner.invoke(platform_app, ["settings", "--db", env.url])
    assert "annotators per item: 2" in shown.output
    assert (
        runner.invoke(platform_app, ["settings", "--annotators-per-item", "6", "--db", env.url]).exit_code
        == 2
    )
    changed = runner.invoke(platform_app, ["settings", "--annotators-per-item", "3", "--db", env.url])
    assert changed.exit_code == 0 and "2 -> 3" in changed.output
    add_users(env.database, {"erin": ("annotator", ["Biology"])})
    env.users["erin"] = env.actor("erin").id or 0
    batch = tmp_path / "three"
    shutil.copytree(candidates, batch)  # another folder: its items are new ones
    import_candidates(env.database, batch)
    with env.database.read() as db:
        three = {i.release_key: i for i in db.scalars(select(Item).where(Item.annotators_required == 3))}
    assert len(three) == 11
    tools0 = three["tools/0"].key
    assert _assigned_key(env, tools0) == 3  # alice, bob and erin

    # Two approvals do not settle an item that needs three.
    for user in ("alice", "bob"):
        _decide_key(env, user, tools0, "approve")
    assert _state(env, tools0) == "in_review"
    _decide_key(env, "erin", tools0, "approve")
    assert _state(env, tools0) == "verified"
    # Two against one: an adjudicator sees all three judgements.
    tools1 = three["tools/1"].key
    _decide_key(env, "alice", tools1, "approve")
    _decide_key(env, "bob", tools1, "approve")
    _decide_key(env, "erin", tools1, "reject")
    assert _state(env, tools1) == "conflict"
    with env.database.read() as db:
        view = adjudication_view(db, env.actor("carol"), _id(env, tools1))
        figures = agreement_report(db)
    assert sorted(j.stance for j in view.judgements) == ["accepts", "accepts", "rejects"]
    assert [j.label for j in view.judgements] == ["A", "B", "C"]
    with env.database.write() as db:
        resolve(db, env.actor("carol"), _id(env, tools1),
                Resolution("verified", "the tool is in view from 0:02", view.item_version))  # fmt: skip
    with env.database.read() as db:
        call = db.scalar(select(Adjudication).where(Adjudication.item_id == _id(env, tools1)))
    assert call is not None and len(call.matched_decisions) == 2  # the two approvals, not the rejection
    assert _state(env, tools1) == "verified"
    # Agreement: the three-rater items are counted with Fleiss' kappa and Krippendorff's alpha;
    # Cohen's kappa, a two-rater figure, is not invented for them.
    assert figures.overall.raters == {3: 2} and figures.overall.kappa is None
    assert figures.overall.fleiss_kappa is not None and figures.overall.krippendorff_alpha is not None
    assert figures.overall.percent == pytest.approx((100 + 100 / 3) / 2)  # pairs agreeing: 3/3, 1/3

    # One annotator per item (`import --annotators 1`): a single judgement settles, an edit included.
    single = tmp_path / "single"
    shutil.copytree(candidates, single)
    result = runner.invoke(platform_app, ["import", str(single), "--annotators", "1", "--db", env.url])
    assert result.exit_code == 0, result.output
    with env.database.read() as db:
        ones = {i.release_key: i for i in db.scalars(select(Item).where(Item.annotators_required == 1))}
    material = ones["materials/0"].key
    assert _assigned_key(env, material) == 1
    holder = _holder(env, material)
    content = ones["materials/0"]
    options = {**(content.options or {}), "A": "Trypsin-EDTA 0.25 %"}
    _decide_key(env, holder, material, "edit", content=Content(content.question, options, content.answer))
    assert _state(env, material) == "verified"
    assert (
        runner.invoke(platform_app, ["import", str(single), "--annotators", "0", "--db", env.url]).exit_code
        == 2
    )


def _id(env: Env, key: str) -> int:
    with env.database.read() as db:
        found = db.scalar(select(Item.id).where(Item.key == key))
    assert found is not None
    return int(found)


def _state(env: Env, key: str) -> str:
    with env.database.read() as db:
        return str(db.scalar(select(Item.state).where(Item.key == key)))


def _assigned_key(env: Env, key: str) -> int:
    with env.database.read() as db:
        return int(db.scalar(select(func.count()).where(Assignment.item_id == _id(env, key))) or 0)


def _holder(env: Env, key: str) -> str:
    with env.database.read() as db:
        name = db.scalar(
            select(User.username)
            .join(Assignment, Assignment.user_id == User.id)
            .where(Assignment.item_id == _id(env, key))
        )
    return str(name)


def _decide_key(env: Env, user: str, key: str, verdict: str, **extra: object) -> None:
    """`decide` for an item named by its identity (two folders share release ids)."""
    with env.database.read() as db:
        item = db.scalar(select(Item).where(Item.key == key))
        assert item is not None
        mine = db.scalar(
            select(Decision).where(Decision.item_id == item.id, Decision.user_id == env.users[user])
        )
    data = DecisionInput(
        verdict=verdict,
        justification=f"{user} checked it against the clip",
        item_version=item.version,
        decision_version=mine.version if mine else 0,
        **extra,
    )  # type: ignore[arg-type]
    with env.database.write() as db:
        submit_decision(db, env.actor(user), item.id, data)
