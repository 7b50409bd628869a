"""Procedural items on the verification platform: import, judgement rules, Table 14 settlement, pages."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from promqa_build_helpers import run
from promqa_lab import PromqaLab
from sqlalchemy import select

from expvid.construction.recipes.promqa.review.judgements import (
    JudgementInput,
    ProceduralResolution,
    adjudication_view,
    resolve,
    submit_judgement,
)
from expvid.fakes.models.server import LoopbackServer
from expvid.platform import PlatformSettings, create_app, open_database
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Adjudication, Assignment, Item
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.errors import SYSTEM, Actor, Conflict, InvalidInput
from expvid.platform.services.exporter import export_verified
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.platform.services.users import add_user
from expvid.platform.testing import LiveServer

FAST = PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)
USERS = {"ann1": "annotator", "ann2": "annotator", "adj": "adjudicator", "root": "admin"}


@pytest.fixture(scope="module")
def candidates(sample_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("promqa_platform") / "cand"
    with LoopbackServer(PromqaLab()) as server:
        run(sample_sources, out, server, next=4, missing=4, others=2)
    return out


@pytest.fixture
def env(candidates: Path, tmp_path: Path) -> Iterator[tuple[Database, dict[str, Actor]]]:
    database = open_database(f"sqlite:///{tmp_path / 'p.db'}")
    actors = {}
    with database.write() as db:
        for name, role in USERS.items():
            user = add_user(
                db, Passwords(FAST), username=name, password=f"pw-{name}-x", role=role, actor=SYSTEM
            )
            actors[name] = Actor(id=user.id, name=name, role=role, disciplines=())
    report = import_candidates(database, candidates)
    assert report.total_imported == len(json.loads((candidates / "examples.json").read_text()))
    yield database, actors
    database.dispose()


def _item(database: Database, kind: str) -> Item:
    with database.read() as db:
        item = db.scalar(select(Item).where(Item.task == kind).order_by(Item.key).limit(1))
    assert item is not None
    return item


def _judge(database: Database, actor: Actor, item: Item, valid: bool, answers: list[bool | None],
           written: tuple[str, ...] = ()) -> None:  # fmt: skip
    with database.read() as db:
        fresh = db.get(Item, item.id)
        assert fresh is not None
        version = fresh.version
    data = JudgementInput(valid, answers, list(written), "", version)
    with database.write() as db:
        submit_judgement(db, actor, item.id, data)


def test_import_keys_items_by_uid_and_plays_the_prefix(env, candidates: Path) -> None:
    database, _ = env
    lines = (candidates / "provenance.jsonl").read_text().splitlines()
    provenance = {json.loads(line)["uid"]: json.loads(line) for line in lines}
    with database.read() as db:
        items = list(db.scalars(select(Item)))
        assignments = list(db.scalars(select(Assignment)))
    assert {i.key for i in items} == set(provenance)
    for item in items:
        assert item.level == 0 and item.state == "in_review"
        assert item.source_video == provenance[item.key]["source"]["video"]
        assert item.window_start == 0.0 and item.window_end == provenance[item.key]["source"]["end"]
        assert item.video_path == provenance[item.key]["clip"] and item.provenance["recipe"]["steps"]
    assert len(assignments) == 2 * len(items)
    again = import_candidates(database, candidates)
    assert again.total_imported == 0 and again.unchanged == len(items)


def test_agreement_settles_and_both_rejecting_rejects(env) -> None:
    database, actors = env
    item = _item(database, "next")
    n = len(item.answer)
    _judge(database, actors["ann1"], item, True, [True] * n)
    _judge(database, actors["ann2"], item, True, [True] * n)
    other = _item(database, "missing")
    _judge(database, actors["ann1"], other, False, [])
    _judge(database, actors["ann2"], other, False, [])
    with database.read() as db:
        assert db.get(Item, item.id).state == "verified"  # type: ignore[union-attr]
        assert db.get(Item, other.id).state == "rejected"  # type: ignore[union-attr]


def test_judgements_are_checked_and_locked(env) -> None:
    database, actors = env
    item = _item(database, "timing")
    with database.write() as db, pytest.raises(InvalidInput, match="judge answer"):
        submit_judgement(
            db, actors["ann1"], item.id, JudgementInput(True, [None] * len(item.answer), [], "", item.version)
        )
    with database.write() as db, pytest.raises(Conflict, match="changed since you opened it"):
        submit_judgement(db, actors["ann1"], item.id, JudgementInput(False, [], [], "", item.version + 5))
    with database.write() as db, pytest.raises(InvalidInput, match="procedural QA item"):
        submit_decision(db, actors["ann1"], item.id, DecisionInput("approve", "looks right", item.version))


def test_written_answers_go_to_the_adjudicator_who_cannot_write_unless_allowed(env) -> None:
    database, actors = env
    item = _item(database, "order")
    n = len(item.answer)
    _judge(database, actors["ann1"], item, True, [True] * n, ("You should have whisked the yogurt first.",))
    _judge(database, actors["ann2"], item, True, [True] * n)
    with database.read() as db:
        assert db.get(Item, item.id).state == "conflict"  # type: ignore[union-attr]
        view = adjudication_view(db, actors["adj"], item.id)
    assert view.question_decided is True and not view.may_write
    open_positions = [a.position for a in view.answers if a.decided is None]
    assert len(open_positions) == 1 and view.answers[open_positions[0]].text.startswith(
        "You should have whisked"
    )
    bad = ProceduralResolution(None, {open_positions[0]: True}, ["An extra answer."], "", view.item_version)
    with database.write() as db, pytest.raises(InvalidInput, match="only when one annotator rejected"):
        resolve(db, actors["adj"], item.id, bad)
    good = ProceduralResolution(None, {open_positions[0]: True}, [], "fine", view.item_version)
    with database.write() as db:
        resolve(db, actors["adj"], item.id, good)
    with database.read() as db:
        settled = db.get(Item, item.id)
        call = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id))
    assert settled is not None and settled.state == "verified" and len(settled.answer) == n + 1
    assert call is not None and call.content["final"]["answer_tags"].count("annotator") == 1
    assert call.content["final"]["answer_approved_by"].count("adjudicator") == 1


def test_a_question_conflict_lets_the_adjudicator_write(env) -> None:
    database, actors = env
    item = _item(database, "measurement")
    _judge(database, actors["ann1"], item, True, [False] * len(item.answer))
    _judge(database, actors["ann2"], item, False, [])
    with database.read() as db:
        view = adjudication_view(db, actors["adj"], item.id)
    assert view.question_decided is None and view.may_write
    calls = {a.position: False for a in view.answers}
    missing_question = ProceduralResolution(None, calls, [], "", view.item_version)
    with database.write() as db, pytest.raises(InvalidInput, match="judge it"):
        resolve(db, actors["adj"], item.id, missing_question)
    resolution = ProceduralResolution(True, calls, ["Use a teaspoon next time."], "", view.item_version)
    with database.write() as db:
        resolve(db, actors["adj"], item.id, resolution)
    with database.read() as db:
        call = db.scalar(select(Adjudication).where(Adjudication.item_id == item.id))
    assert call is not None and call.content["final"]["answer_tags"] == ["adjudicator"]
    assert call.content["final"]["question_approved_by"] == "adjudicator"


def test_the_review_page_shows_the_recipe_status_and_the_errors(env) -> None:
    database, _ = env
    item = _item(database, "timing")
    settings = PlatformSettings(database_url=str(database.url), passwords=FAST)
    with (
        LiveServer(create_app(settings, database=database)) as live,
        httpx.Client(base_url=live.url) as client,
    ):
        login = client.get("/login").text
        token = login.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        client.post(
            "/login", data={"username": "ann1", "password": "pw-ann1-x", "csrf_token": token, "next": "/"}
        )
        page = client.get(f"/items/{item.id}").text
    record = item.record
    assert 'data-testid="recipe-graph"' in page and "step-current" in page and "step-passed" in page
    assert "step-pending" in page and "\u26a0" in page
    for step in record["previous_steps"]:
        assert step["description"] in page
    for error in record["current_step"].get("errors", []):
        assert f"[{error['tag']}] {error['description']}" in page
    assert "Is this a valid multimodal question about procedural activities?" in page
    # The answers are judged only once the question is judged valid (hidden until then).
    assert "data-answers hidden" in page and page.count('data-testid="answer"') == len(item.answer)


def test_the_expvid_export_leaves_procedural_items_to_their_own_format(env, tmp_path: Path) -> None:
    database, actors = env
    item = _item(database, "next")
    _judge(database, actors["ann1"], item, True, [True] * len(item.answer))
    _judge(database, actors["ann2"], item, True, [True] * len(item.answer))
    report = export_verified(database, tmp_path / "expvid")
    assert report.total == 0
    shutil.rmtree(tmp_path / "expvid", ignore_errors=True)
