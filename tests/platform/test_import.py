"""Importing candidate directories batch after batch: stable identities, per-item outcomes (added,
unchanged, changed, restored, removed, conflict), history kept, clear errors for bad lines."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_batches import (
    add_experiment,
    drop,
    exclude_experiment,
    next_batch,
    read_jsonl,
    redraft,
    rename_clips,
    with_uids,
    write_jsonl,
)
from platform_env import USERS, Env, add_users
from sqlalchemy import func, select

from expvid.platform import PlatformSettings
from expvid.platform.db.engine import Database
from expvid.platform.db.models import AuditEvent, Decision, Experiment, ImportBatch, Item, Segment
from expvid.platform.services.exporter import ExportError, export_public
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.level2 import StepRow, rows_from_steps
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.platform.services.settlement import segment_steps
from expvid.schema import DataError


def _count(database: Database, model: type) -> int:
    with database.read() as db:
        return int(db.scalar(select(func.count()).select_from(model)) or 0)


def test_import_reads_records_and_every_sidecar(env: Env) -> None:
    assert _count(env.database, Item) == 11
    materials = env.item("materials/0")
    assert (materials.source_video, materials.window_start, materials.window_end) == (
        "sources/E1/video.mp4",
        2.0,
        4.0,
    )
    assert materials.flags == [
        {"kind": "blind_answerable", "detail": "3 of 3 text-only models answered", "score": 0.83}
    ]
    assert materials.creator == "deepseek-r1"
    assert env.item("tools/0").flags[0]["kind"] == "asr_leakage"
    assert env.item("tools/2").discipline == "Chemistry"
    with env.database.read() as db:
        experiment = db.scalar(select(Experiment).where(Experiment.video_id == "E1"))
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
    assert experiment is not None and experiment.paper_md is not None and "# Results" in experiment.paper_md
    assert experiment.full_video == "videos/level_3/E1_.mp4" and len(experiment.full_steps) == 6
    assert segment is not None and [s["number"] for s in segment.steps] == [3, 4, 5]
    assert env.item("step_prediction/0").segment_id == segment.id
    assert env.item("materials/0").segment_id is None


def test_directories_without_uids_are_keyed_per_directory(env: Env, tmp_path: Path) -> None:
    """The fixture has no uids (an older build): re-importing it finds every item again; another
    directory with the same positional ids is another build, imported beside it, never over it."""
    again = import_candidates(env.database, env.candidates)
    assert again.identity == "directory" and again.exit_code == 0
    assert again.counts == {
        "added": 0,
        "unchanged": 11,
        "changed": 0,
        "restored": 0,
        "removed": 0,
        "conflict": 0,
    }
    assert env.item("materials/0").key.startswith("dir-") and env.item("materials/0").key.endswith(
        ":materials/0"
    )

    other = tmp_path / "another-build"
    shutil.copytree(env.candidates, other)
    second = import_candidates(env.database, other)
    assert second.counts["added"] == 11 and second.counts["removed"] == 0 and second.exit_code == 0
    assert any("release id materials/0 is shared by 2 items" in w for w in second.warnings)
    assert any(
        w.startswith("experiment E1 also has 10 item(s) imported with other identities")
        for w in second.warnings
    )
    assert _count(env.database, Item) == 22
    # The first directory's items are untouched; both copies of tools/0 verified: the export refuses.
    with env.database.read() as db:
        copies = list(db.scalars(select(Item).where(Item.release_key == "tools/0").order_by(Item.id)))
    assert [c.batch_id for c in copies] == [again.batch_id, second.batch_id]
    for copy in copies:
        with env.database.write() as db:
            for name in ("alice", "bob"):
                version = db.get(Item, copy.id).version  # type: ignore[union-attr]
                submit_decision(
                    db, env.actor(name), copy.id, DecisionInput("approve", "seen in the clip", version)
                )
    with pytest.raises(ExportError, match=r"tools/0: dir-[0-9a-f]{12}:tools/0, dir-"):
        export_public(env.database, tmp_path / "release")


def _other_experiments_only(batch: Path, keep: set[str]) -> None:
    """A build of other sources: only `keep`'s records, and no curation verdict on the rest."""
    for path in (batch / "annotations").rglob("*.jsonl"):
        write_jsonl(path, [r for r in read_jsonl(path) if r["video_id"] in keep])
    for name, field in (("segments.jsonl", "video_id"), ("experiments.jsonl", "video_id")):
        write_jsonl(batch / name, [r for r in read_jsonl(batch / name) if r[field] in keep])
    write_jsonl(
        batch / "provenance.jsonl",
        [r for r in read_jsonl(batch / "provenance.jsonl") if r["video_id"] in keep],
    )


def test_a_second_build_of_other_experiments_adds_all_its_items(
    db_url: str, candidates: Path, tmp_path: Path
) -> None:
    first = with_uids(candidates, tmp_path / "batch1")
    second = next_batch(first, tmp_path / "batch2")
    added = add_experiment(second, "E1", "E3", "Biology")
    _other_experiments_only(second, {"E3"})
    database = Database(db_url)
    try:
        add_users(database, USERS)
        one = import_candidates(database, first)
        assert one.identity == "uid" and one.counts["added"] == 11
        assert {i.key for i in one.items} == {i.release_key for i in one.items}  # uids are the release keys
        two = import_candidates(database, second)
        assert two.counts == {"added": len(added), "unchanged": 0, "changed": 0, "restored": 0, "removed": 0,
                              "conflict": 0}  # fmt: skip
        assert sorted(i.release_key for i in two.items) == sorted(added) and two.exit_code == 0
        assert _count(database, Item) == 11 + len(added)
        with database.read() as db:
            assert db.scalar(select(func.count()).where(Item.state == "removed")) == 0
    finally:
        database.dispose()


@pytest.fixture
def campaign(db_url: str, candidates: Path, tmp_path: Path) -> Iterator[tuple[Env, Path]]:
    """Batch 1 of a campaign (stable ids) imported, with the five test users."""
    first = with_uids(candidates, tmp_path / "batch1")
    database = Database(db_url)
    users = add_users(database, USERS)
    import_candidates(database, first)
    try:
        yield Env(url=db_url, database=database, settings=PlatformSettings(database_url=db_url), candidates=first,
                  users=users), first  # fmt: skip
    finally:
        database.dispose()


def _decide(env: Env, user: str, key: str, verdict: str = "approve", **extra: object) -> None:
    item = env.item(key)
    with env.database.write() as db:
        mine = db.scalar(
            select(Decision).where(Decision.item_id == item.id, Decision.user_id == env.users[user])
        )
        data = DecisionInput(verdict, f"{user} compared {key} with the clip", item.version,
                             mine.version if mine else 0, **extra)  # type: ignore[arg-type]  # fmt: skip
        submit_decision(db, env.actor(user), item.id, data)


def test_the_next_batch_reports_every_item_and_keeps_every_decision(
    campaign: tuple[Env, Path], tmp_path: Path
) -> None:
    env, first = campaign
    verified, half, untouched = "tools/E1-tool0", "materials/E1-mate0", "sequence_generation/E1-sequ1"
    for user in ("alice", "bob"):
        _decide(env, user, verified)
    _decide(env, "alice", half)
    before = {key: env.item(key) for key in (verified, half, untouched)}
    assert before[verified].state == "verified"

    second = next_batch(first, tmp_path / "elsewhere" / "batch2")  # moved to another machine...
    rename_clips(second)  # ...and every clip file renamed
    redraft(second, half, question="Which material is pipetted into the well?")
    redraft(
        second,
        verified,
        options={"A": "Centrifuge", "B": "Erlenmeyer flask", "C": "Glass dish", "D": "Test tube"},
    )
    drop(second, "tools/E1-tool1")
    exclude_experiment(second, "E2")
    added = add_experiment(second, "E1", "E3", "Biology")

    report = import_candidates(env.database, second)
    outcome = {i.release_key: i for i in report.items}
    assert report.counts == {"added": len(added), "unchanged": 7, "changed": 2, "restored": 0, "removed": 2,
                             "conflict": 0}  # fmt: skip
    assert report.exit_code == 0 and report.identity == "uid"
    assert {k for k, i in outcome.items() if i.outcome == "added"} == set(added)
    assert (
        outcome["tools/E2-tool2"].outcome == "removed"
        and "excluded upstream" in outcome["tools/E2-tool2"].reason
    )
    assert (
        outcome["tools/E1-tool1"].outcome == "removed"
        and "no longer among" in outcome["tools/E1-tool1"].reason
    )

    # Changed: a new upstream version, back to review, earlier decisions stale but kept.
    now = env.item(verified)
    assert (now.state, now.upstream_version, now.settled_via) == ("in_review", 2, None)
    assert (
        now.options is not None
        and now.options["C"] == "Glass dish"
        and now.version > before[verified].version
    )
    assert outcome[verified].stale_decisions == 2 and outcome[verified].state == "in_review"
    assert env.item(half).question == "Which material is pipetted into the well?"
    assert outcome[half].stale_decisions == 1
    with env.database.read() as db:
        decisions = list(db.scalars(select(Decision).where(Decision.item_id == now.id)))
        actions = [e.action for e in db.scalars(select(AuditEvent).where(AuditEvent.item_id == now.id))]
    assert len(decisions) == 2 and all(d.stale for d in decisions)
    assert "item.verified" in actions and actions.index("item.changed_upstream") > actions.index(
        "item.verified"
    )
    # Unchanged: same state and version, media now from the new folder (renamed clips).
    kept = env.item(untouched)
    assert (kept.state, kept.version, kept.upstream_version) == (
        before[untouched].state,
        before[untouched].version,
        1,
    )
    assert kept.batch_id == report.batch_id and "renamed_" in kept.video_path
    assert (second / kept.video_path).is_file()
    # Removed: flagged, out of review, never deleted; not in the export.
    gone = env.item("tools/E1-tool1")
    assert gone.state == "removed" and gone.flags[-1]["kind"] == "removed_upstream"
    assert gone.flags[-1]["previous_state"] == "in_review"
    assert _count(env.database, Item) == 11 + len(added)
    # The report is machine-readable and stored with the batch.
    data = json.loads(json.dumps(report.as_dict()))
    assert data["format"] == "expvid-platform-import/1" and data["counts"]["changed"] == 2
    assert {i["release_key"] for i in data["items"]} == set(outcome)
    with env.database.read() as db:
        batch = db.get(ImportBatch, report.batch_id)
        assert batch is not None and batch.summary["counts"] == report.counts
        assert {i["release_key"] for i in batch.summary["items"]} == {
            verified,
            half,
            "tools/E2-tool2",
            "tools/E1-tool1",
        }

    # Batch 1's folder again (a lead undoing batch 2): what batch 2 removed comes back as it was.
    back = import_candidates(env.database, first)
    outcome = {i.release_key: i for i in back.items}
    assert outcome["tools/E1-tool1"].outcome == "restored" and env.item("tools/E1-tool1").state == "in_review"
    assert outcome["tools/E2-tool2"].outcome == "restored"
    assert outcome[half].outcome == "changed" and env.item(half).upstream_version == 3
    assert all(i.outcome != "removed" for i in back.items)  # E3 is not covered by batch 1's folder


def test_a_redraft_made_from_a_step_list_reviewers_corrected_is_a_conflict(
    campaign: tuple[Env, Path], tmp_path: Path
) -> None:
    env, first = campaign
    key = "sequence_generation/E1-sequ0"
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
        assert segment is not None
        rows = rows_from_steps(segment_steps(segment))
    rows[1] = StepRow(rows[1].ref, "Rinse the well twice with 1 mL PBS", rows[1].start, rows[1].end)
    for user in ("alice", "bob"):
        _decide(env, user, key, "edit", rows=rows)
    assert env.item(key).state == "verified"
    prediction = env.item("step_prediction/E1-step0")

    second = next_batch(first, tmp_path / "batch2")
    segments = read_jsonl(second / "segments.jsonl")
    segments[0]["steps"][0]["text"] = "Aspirate all medium"
    segments[0]["full_step_list"][2] = "Aspirate all medium"
    for segment in segments:
        segment["full_step_list"][2] = "Aspirate all medium"
    write_jsonl(second / "segments.jsonl", segments)
    redraft(second, "step_prediction/E1-step0", asr_caption="Aspirate all medium and rinse.")
    report = import_candidates(env.database, second)
    conflict = next(i for i in report.items if i.release_key == "step_prediction/E1-step0")
    assert conflict.outcome == "conflict" and "corrected the step list" in conflict.reason
    assert report.exit_code == 3
    after = env.item("step_prediction/E1-step0")
    assert after.asr_caption == prediction.asr_caption and after.version == prediction.version
    assert after.flags[-1]["kind"] == "upstream_conflict"
    assert env.item(key).state == "verified"


def test_bad_lines_are_reported_by_file_and_line_and_nothing_is_imported(
    db_url: str, candidates: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(candidates, broken)
    tools = broken / "annotations" / "level1" / "tools.jsonl"
    good = tools.read_text().splitlines()
    bad_records = [
        "{not json",
        json.dumps({"id": 7, "video_path": "videos/missing.mp4", "question": "q", "options": {"A": "a", "B": "b", "C": "c", "D": "d"},
                    "answer": "A", "asr_caption": "", "video_id": "E1", "category": "Biology"}),
        json.dumps({"id": 8, "video_path": "../../etc/passwd", "question": "q", "options": {"A": "a", "B": "b", "C": "c", "D": "d"},
                    "answer": "A", "asr_caption": "", "video_id": "E1", "category": "Biology"}),
        json.dumps({"id": 9, "video_path": "videos/level_1/E1/clip_m.mp4", "question": "q",
                    "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": "E", "asr_caption": "", "video_id": "E1",
                    "category": "Biology"}),
    ]  # fmt: skip
    tools.write_text("\n".join([*good, *bad_records]) + "\n")
    blanks = broken / "annotations" / "level3" / "scientific_discovery.jsonl"
    record = json.loads(blanks.read_text())
    record["answer"] = ["drug", "extra"]
    blanks.write_text(json.dumps(record) + "\n")
    provenance = read_jsonl(broken / "provenance.jsonl")
    provenance[0]["uid"] = "dir-forged:materials/0"
    provenance[1]["content_sha256"] = "not a digest"
    write_jsonl(broken / "provenance.jsonl", provenance)

    database = Database(db_url)
    try:
        with pytest.raises(DataError) as caught:
            import_candidates(database, broken)
        message = str(caught.value)
        first_bad = len(good) + 1
        assert f"tools.jsonl:{first_bad}: not valid JSON" in message
        assert f"tools.jsonl:{first_bad + 1}: video file not found: videos/missing.mp4" in message
        assert f"tools.jsonl:{first_bad + 2}: 'video_path' must be a path inside" in message
        assert f"tools.jsonl:{first_bad + 3}: the answer must be one of the option letters" in message
        assert "scientific_discovery.jsonl:1: the question has 1 blank(s) but 2 answer(s)" in message
        assert "provenance.jsonl:1: 'uid' may not start with platform: or dir-" in message
        assert "provenance.jsonl:2: 'content_sha256' must be 64 lowercase hexadecimal digits" in message
        assert _count(database, Item) == 0 and _count(database, ImportBatch) == 0

        lenient = import_candidates(database, broken, skip_bad=True)
        assert len(lenient.problems) == 7
        assert lenient.total_imported == 10  # all good records
        assert _count(database, Item) == 10
    finally:
        database.dispose()


def test_a_directory_without_annotations_is_refused(db_url: str, tmp_path: Path) -> None:
    database = Database(db_url)
    try:
        with pytest.raises(DataError, match="no annotation files"):
            import_candidates(database, tmp_path)
    finally:
        database.dispose()
