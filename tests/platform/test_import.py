"""Importing candidate directories: sidecars, idempotence, and clear errors for bad lines."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from platform_env import Env
from sqlalchemy import func, select

from expvid.platform.db.engine import Database
from expvid.platform.db.models import Experiment, ImportBatch, Item, Segment
from expvid.platform.services.importer import import_candidates
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


def test_reimport_is_idempotent_and_never_overwrites_reviewed_items(env: Env, tmp_path: Path) -> None:
    again = import_candidates(env.database, env.candidates)
    assert again.total_imported == 0 and again.unchanged == 11 and again.changed_upstream == []
    changed = tmp_path / "changed"
    shutil.copytree(env.candidates, changed)
    path = changed / "annotations" / "level1" / "materials.jsonl"
    record = json.loads(path.read_text())
    record["question"] = "A different question?"
    path.write_text(json.dumps(record) + "\n")
    report = import_candidates(env.database, changed)
    assert report.changed_upstream == ["materials/0"]
    assert env.item("materials/0").question == "What material is added to the well in this step?"
    assert _count(env.database, Item) == 11


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
        assert _count(database, Item) == 0 and _count(database, ImportBatch) == 0

        lenient = import_candidates(database, broken, skip_bad=True)
        assert len(lenient.problems) == 5
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
