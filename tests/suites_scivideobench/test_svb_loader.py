"""Loading the SciVideoBench release: keys, disciplines, video fallbacks, and bad records by file:line."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from expvid.schema import DataError, VideoRef
from expvid.suites.scivideobench import load_scivideobench
from expvid.suites.scivideobench.spec import DISCIPLINE_GROUPS, PAPER_DISCIPLINE_COUNTS, QUESTION_TYPES


def test_items_are_keyed_by_video_question_and_type(svb_dataset) -> None:
    ids = [item.id for item in svb_dataset.items]
    assert len(ids) == 12 and len(set(ids)) == 12
    assert "10001/1/conceptual" in ids and "10001/1/quantitative" in ids  # same (video, question) pair
    pairs = Counter((item.meta["video_id"], item.meta["question_id"]) for item in svb_dataset.items)
    assert max(pairs.values()) == 2
    assert Counter(item.task for item in svb_dataset.items) == {
        "conceptual": 5,
        "hypothetical": 4,
        "quantitative": 3,
    }


def test_raw_disciplines_map_onto_table_2_columns(svb_dataset) -> None:
    by_raw = {(item.meta["discipline_raw"], item.discipline) for item in svb_dataset.items}
    assert ("Biochemistry", "Biology") in by_raw and ("Engineering", "Physics") in by_raw
    assert {item.discipline for item in svb_dataset.items} == set(PAPER_DISCIPLINE_COUNTS)
    assert set(DISCIPLINE_GROUPS.values()) == set(PAPER_DISCIPLINE_COUNTS)
    assert sum(PAPER_DISCIPLINE_COUNTS.values()) == 1000


def test_videos_found_with_the_official_fallbacks(svb_dataset) -> None:
    suffixes = {item.meta["video_id"]: Path(item.media.path).suffix for item in svb_dataset.items}
    assert suffixes == {"10001": ".mp4", "10002": ".MP4", "10003": ".mkv"}
    for item in svb_dataset.items:
        assert isinstance(item.media, VideoRef) and Path(item.media.path).is_file()
        assert item.meta["video_duration"] in (24.6, 20.0, 16.4)


def test_task_selection(svb_dir) -> None:
    dataset = load_scivideobench(svb_dir, tasks=["quantitative"])
    assert {item.task for item in dataset.items} == {"quantitative"} and len(dataset.items) == 3
    with pytest.raises(DataError, match=r"unknown scivideobench task.*tasks are: conceptual"):
        load_scivideobench(svb_dir, tasks=["numeric"])


def test_a_json_array_release_loads_the_same(svb_dir, tmp_path) -> None:
    shutil.copytree(svb_dir / "videos", tmp_path / "videos")
    records = [json.loads(line) for line in (svb_dir / "scivideobench_1k.jsonl").read_text().splitlines()]
    (tmp_path / "scivideobench_1k.json").write_text(json.dumps(records, indent=2))
    assert [i.id for i in load_scivideobench(tmp_path).items] == [
        i.id for i in load_scivideobench(svb_dir).items
    ]


def test_bad_records_are_reported_by_line_and_the_rest_loads(svb_dir, tmp_path) -> None:
    shutil.copytree(svb_dir / "videos", tmp_path / "videos")
    lines = (svb_dir / "scivideobench_1k.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first_task = QUESTION_TYPES[first["question_type"]]
    bad = [
        {**first, "question_type": "Numeric Reasoning"},
        {**first, "question_id": 9, "video_id": "99999"},
        {**first, "question_id": 10, "video_duration": 0.4},
        {**first, "question_id": 11, "answer": "K"},
        first,  # the first record again: a duplicate key
    ]
    (tmp_path / "scivideobench_1k.jsonl").write_text(
        "\n".join(lines + [json.dumps(r) for r in bad] + ["{oops"]) + "\n"
    )
    dataset = load_scivideobench(tmp_path)
    assert len(dataset.items) == 13  # the record whose video is missing is an item (a media failure)
    assert [media.key for media in dataset.missing_media()] == ["videos/jove_99999.mp4"]
    messages = {problem.line: problem.message for problem in dataset.problems}
    assert set(messages) == {13, 15, 16, 17, 18}
    assert "question_type 'Numeric Reasoning'" in messages[13]
    assert "under one second" in messages[15]
    assert "answer 'K' is not one of the options" in messages[16]
    assert "duplicate" in messages[17] and "first on line 1" in messages[17]
    assert "not valid JSON" in messages[18]
    # Each is an invalid record of its question type when that much is readable.
    tasks = {record.problem.line: record.task for record in dataset.invalid}
    assert tasks == {13: None, 15: first_task, 16: first_task, 17: first_task, 18: None}
    with pytest.raises(DataError):
        load_scivideobench(tmp_path, strict=True)


def test_no_release_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(DataError, match=r"scivideobench_1k\.jsonl"):
        load_scivideobench(tmp_path)
