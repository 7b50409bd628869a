"""A campaign in three batches, from drafting to an evaluated release (issue 18, section 6).

Batch 1 drafts three experiments of the sample; the platform imports them and two reviewers decide
half of the items (agreeing on most, disagreeing on some). Batch 2 adds the experiment whose id sorts
first, excludes a drafted one in curation.csv and re-drafts another (`--redo level1:ID` against a lab
that now answers that experiment's MCQs with other distractors); the platform imports it. Batch 3 adds
the last two experiments. The reviewers then decide everything still open, the adjudicator settles
the disagreements, the platform exports the release, and `expvid eval` runs on the export.

Asserted throughout: no decision is lost (every decision row stays, stale ones marked), no reviewed
item changes id, answer letter or clip, no item is dropped (every item of each directory has an
outcome in the import report, and items of an excluded experiment are reported removed, never
deleted), no model call is paid twice (the only request bodies sent again are the re-drafted
experiment's Level-1 prompts, which `--redo` asks afresh by design), and every change is in the
import report.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

from build_helpers import bodies, read_jsonl, run_build
from build_responder import ScriptedLab
from sqlalchemy import func, select
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.db.models import Decision, Item
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.adjudication import Resolution, resolve
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.exporter import export_verified
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.platform.services.users import add_user

FIRST_BATCH = ["62517", "63090", "65321"]
SORTS_FIRST, EXCLUDED, REDRAFTED = "61842", "63090", "65321"
LAST_BATCH = ["64455", "66708"]
DISCIPLINES = ["Biology", "Chemistry", "Neuroscience", "Medicine"]


class Campaign:
    def __init__(self, root: Path, sample_sources: Path) -> None:
        self.sample = sample_sources
        self.sources = root / "sources"
        self.sources.mkdir(parents=True)
        self.out = root / "candidates"
        url = f"sqlite:///{root / 'platform.sqlite3'}"
        upgrade_to_head(url)
        self.database = Database(url)
        passwords = Passwords(PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1))
        self.actors: dict[str, Actor] = {}
        with self.database.write() as db:
            for name, role in (("alice", "annotator"), ("bob", "annotator"), ("carol", "adjudicator")):
                user = add_user(
                    db, passwords, username=name, password=f"pw-{name}-secret", role=role,
                    disciplines=DISCIPLINES if role == "annotator" else [], actor=SYSTEM,
                )  # fmt: skip
                self.actors[name] = Actor(
                    id=user.id, name=name, role=role, disciplines=tuple(user.disciplines or [])
                )
        self.sent: list[str] = []

    def add(self, video_ids: list[str]) -> None:
        for video_id in video_ids:
            shutil.copytree(self.sample / video_id, self.sources / video_id)

    def build(self, lab: ScriptedLab, **overrides: Any) -> tuple[dict[str, Any], list[str]]:
        with LoopbackServer(lab) as server:
            report = run_build(self.sources, self.out, server, blind_samples=1, **overrides)
            sent = bodies(server)
        assert report["failed_units"] == []
        return report, sent

    def import_batch(self) -> dict[str, Any]:
        """`expvid platform import` as a lead runs it; the JSON report is what is asserted on."""
        result = CliRunner().invoke(
            app, ["platform", "import", str(self.out), "--db", self.database.url, "--json"]
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def records(self) -> dict[str, dict[str, Any]]:
        found = {}
        for path in sorted((self.out / "annotations").rglob("*.jsonl")):
            for record in read_jsonl(path):
                found[f"{path.stem}/{record['id']}"] = record
        return found

    def decide(self, user: str, item: Item, verdict: str) -> None:
        with self.database.read() as db:
            # A decision on an item that changed upstream is kept, marked stale, and revised in place.
            mine = db.scalar(
                select(Decision).where(Decision.item_id == item.id, Decision.user_id == self.actors[user].id)
            )
        data = DecisionInput(
            verdict=verdict, justification=f"{user} checked the clip", item_version=item.version,
            decision_version=mine.version if mine else 0,
        )  # fmt: skip
        with self.database.write() as db:
            submit_decision(db, self.actors[user], item.id, data)

    def open_items(self) -> list[Item]:
        with self.database.read() as db:
            return list(
                db.scalars(select(Item).where(Item.state.in_(("pending", "in_review"))).order_by(Item.key))
            )

    def decision_ids(self) -> set[int]:
        with self.database.read() as db:
            return set(db.scalars(select(Decision.id)))


def _review_csv(out: Path, video_id: str, value: str) -> None:
    path = out / "curation.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    for row in rows:
        if row["video_id"] == video_id:
            row["review"] = value
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _outcomes(report: dict[str, Any]) -> dict[str, str]:
    return {entry["release_key"]: entry["outcome"] for entry in report["items"]}


def test_a_campaign_in_three_batches_keeps_every_decision_identity_and_paid_call(sample_sources, tmp_path):
    campaign = Campaign(tmp_path, sample_sources)

    # -- batch 1: draft, import, two reviewers decide half (and disagree on a few) --------------
    campaign.add(FIRST_BATCH)
    _, sent1 = campaign.build(ScriptedLab())
    batch1 = campaign.records()
    imported1 = campaign.import_batch()
    assert set(_outcomes(imported1)) == set(batch1) and set(_outcomes(imported1).values()) == {"added"}
    open_items = campaign.open_items()
    reviewed = open_items[: len(open_items) // 2]
    disputed = {item.key for item in reviewed[::7]}
    for item in reviewed:
        campaign.decide("alice", item, "approve")
        campaign.decide("bob", item, "reject" if item.key in disputed else "approve")
    reviewed_keys = {item.release_key for item in reviewed}
    decisions_before = campaign.decision_ids()
    assert len(decisions_before) == 2 * len(reviewed)

    # -- batch 2: add the experiment that sorts first, exclude one, re-draft one -----------------
    campaign.add([SORTS_FIRST])
    _review_csv(campaign.out, EXCLUDED, "exclude")
    _, sent2 = campaign.build(ScriptedLab(redraft={REDRAFTED}), redo=(f"level1:{REDRAFTED}",))
    batch2 = campaign.records()
    # Only the re-drafted experiment's Level-1 prompts were sent again (by design of --redo).
    again = set(sent2) & set(sent1)
    assert again and _level1_calls_of(sorted(again), REDRAFTED) == len(again)
    imported2 = campaign.import_batch()
    outcome2 = _outcomes(imported2)
    excluded = {key for key, record in batch1.items() if record["video_id"] == EXCLUDED}
    new = {key for key, record in batch2.items() if record["video_id"] == SORTS_FIRST}
    assert {k for k, o in outcome2.items() if o == "removed"} == excluded
    assert {k for k, o in outcome2.items() if o == "added"} == new
    changed = {k for k, o in outcome2.items() if o == "changed"}
    assert changed and all(batch2[k]["video_id"] == REDRAFTED for k in changed)
    assert all(batch2[k]["question"] == batch1[k]["question"] for k in changed)  # new distractors, same item
    assert set(outcome2) == set(batch2) | excluded  # nothing dropped: every item has an outcome
    assert imported2["counts"]["conflict"] == 0

    # -- batch 3: the last two experiments ------------------------------------------------------
    campaign.add(LAST_BATCH)
    _, sent3 = campaign.build(ScriptedLab(redraft={REDRAFTED}))
    batch3 = campaign.records()
    assert not set(sent3) & (set(sent1) | set(sent2))  # nothing paid twice
    imported3 = campaign.import_batch()
    outcome3 = _outcomes(imported3)
    assert {k for k, o in outcome3.items() if o == "added"} == {
        k for k, r in batch3.items() if r["video_id"] in LAST_BATCH
    }
    assert {k for k, o in outcome3.items() if o == "changed"} == set()

    # No reviewed item changed id, letter or clip in any batch (the re-drafted ones got new
    # distractors, on the same letter); none of them was dropped without a report line.
    for key in reviewed_keys - excluded:
        for batch in (batch2, batch3):
            assert key in batch
            assert (batch[key]["answer"], batch[key]["video_path"]) == (
                batch1[key]["answer"],
                batch1[key]["video_path"],
            )
    # No decision lost: every decision is still there; those on changed items are kept as stale history.
    assert decisions_before <= campaign.decision_ids()
    with campaign.database.read() as db:
        stale = db.scalar(select(func.count()).select_from(Decision).where(Decision.stale.is_(True)))
    assert stale == 2 * len({k for k in changed if k in reviewed_keys})

    # -- review what is open, adjudicate the disputes, export, evaluate ---------------------------
    for item in campaign.open_items():
        campaign.decide("alice", item, "approve")
        campaign.decide("bob", item, "approve")
    with campaign.database.read() as db:
        conflicts = list(db.scalars(select(Item).where(Item.state == "conflict")))
    # The disputes left are batch 1's, less those of the excluded experiment (withdrawn) and those the
    # re-draft changed (reviewed again from scratch, and approved by both this time).
    assert {item.key for item in conflicts} == disputed - excluded - changed
    for item in conflicts:
        with campaign.database.write() as db:
            resolve(
                db, campaign.actors["carol"], item.id,
                Resolution(outcome="verified", justification="the clip shows it", item_version=item.version),
            )  # fmt: skip
    export = tmp_path / "release"
    exported = export_verified(campaign.database, export, internal=tmp_path / "internal")
    released = {
        f"{path.stem}/{record['id']}"
        for path in (export / "annotations").rglob("*.jsonl")
        for record in read_jsonl(path)
    }
    assert released == set(batch3)  # every item of the final directory, verified, ids as built
    assert exported is not None
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        ["eval", "--data", str(export), "--model", "random:0", "--out", str(run), "--limit", "2",
         "--frames", "L1=2,L2=2,L3=4", "--size", "64", "--no-cache", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((run / "scores.json").read_text())["run"]["n_items"] == 20


def _level1_calls_of(sent: list[str], video_id: str) -> int:
    """How many of `sent` are Level-1 requests about this experiment's narration."""
    from expvid.suites.sample.scripts import load_scripts

    script = next(s for s in load_scripts() if s.video_id == video_id)
    narrations = [text[:30] for text in (*(step.narration for step in script.steps), script.slide_narration)]
    level1 = ("specializing in extracting", "MCQs) for", "for **quantity recognition**", "You will be given two inputs",
              "for scientific experiment video understanding given the ASR caption")  # fmt: skip
    count = 0
    for body in sent:
        text = json.dumps(json.loads(body)["messages"], ensure_ascii=False)
        if any(marker in text for marker in level1) and any(n in text for n in narrations):
            count += 1
    return count
