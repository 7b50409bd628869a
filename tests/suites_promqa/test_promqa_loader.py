"""Loading ProMQA: the real release files (QA without video) and the sample, problems by file:line."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from expvid.schema import AnswerType, DataError, VideoRef
from expvid.suites.promqa import ProMQASuite, load_promqa


def test_the_real_release_loads_whole(real_dataset) -> None:
    assert len(real_dataset.items) == 401 and not real_dataset.problems
    assert Counter(item.task for item in real_dataset.items) == {
        "next": 158,
        "missing": 148,
        "timing": 25,
        "order": 20,
        "measurement": 17,
        "preparation": 14,
        "temperature": 10,
        "technique": 9,
    }
    assert len({item.id for item in real_dataset.items}) == 401  # question_id is the key (example_id repeats)
    assert len({item.meta["example_id"] for item in real_dataset.items}) == 376
    assert all(item.answer_type is AnswerType.FREE_TEXT for item in real_dataset.items)


def test_real_breakdown_groups(real_dataset) -> None:
    suite = ProMQASuite()
    groups = Counter(
        (suite.groups(item)["error"], suite.groups(item)["answer_source"]) for item in real_dataset.items
    )
    by_error = Counter({key[0]: 0 for key in groups})
    by_source = Counter({key[1]: 0 for key in groups})
    for (error, source), n in groups.items():
        by_error[error] += n
        by_source[source] += n
    # The release marks 225 examples noisy (§2.3 of the paper says 225 clean: the text swaps them).
    assert by_error == {"noisy": 225, "clean": 176}
    assert by_source == {"machine": 214, "both": 105, "human": 82}


def test_the_recording_prefix_and_recipe(real_dataset) -> None:
    item = next(i for i in real_dataset.items if i.id == "17_40_5_next")
    assert isinstance(item.media, VideoRef)
    assert (item.media.start, item.media.end) == (0.0, 473.0)  # end_time 00:07:53
    assert item.meta["video_id"] == "17_40" and item.meta["activity_name"] == "Cucumber Raita"
    assert item.meta["recipe_dot"].startswith("digraph G {\nSTART;\n")


def test_sample_loads_with_its_recordings(promqa_dataset) -> None:
    assert len(promqa_dataset.items) == 10 and not promqa_dataset.problems
    assert {item.task for item in promqa_dataset.items} == {
        "missing", "next", "order", "measurement", "preparation", "technique", "temperature", "timing"
    }  # fmt: skip
    for item in promqa_dataset.items:
        assert isinstance(item.media, VideoRef) and item.media.path.endswith(
            f"videos/{item.meta['recording_id']}.mp4"
        )


def test_bad_records_are_reported_by_line(promqa_dir, tmp_path) -> None:
    shutil.copytree(promqa_dir / "videos", tmp_path / "videos")
    shutil.copy(promqa_dir / "graphs.json", tmp_path / "graphs.json")
    records = json.loads((promqa_dir / "examples.json").read_text())
    first = records[0]
    records += [
        {**first, "question_id": "x1", "end_time": "7 minutes"},
        {**first, "question_id": "x2", "activity_name": "Pancakes"},
        {**first, "question_id": "x3", "answer_tags": []},
        {**first, "question_id": "x4", "recording_id": "9_99"},
        first,
    ]
    (tmp_path / "examples.json").write_text(json.dumps(records, indent=4))
    dataset = load_promqa(tmp_path)
    assert len(dataset.items) == 11  # x4's recording is missing: an item, scored as a media failure
    assert [media.key for media in dataset.missing_media()] == ["videos/9_99.mp4"]
    messages = [problem.message for problem in dataset.problems]
    assert [p.path.name for p in dataset.problems] == ["examples.json"] * 4
    assert "end_time must be HH:MM:SS" in messages[0]
    assert "activity 'Pancakes' has no recipe graph" in messages[1]
    assert "answer_tags must give one tag per answer" in messages[2]
    assert "duplicate question_id" in messages[3]
    assert [(record.task, record.source_id) for record in dataset.invalid] == [
        (first["type"], "x1"), (first["type"], "x2"), (first["type"], "x3"), (first["type"], first["question_id"])
    ]  # fmt: skip
    lines = [problem.line for problem in dataset.problems]
    assert lines == sorted(lines) and lines[0] > 1
    text = (tmp_path / "examples.json").read_text().splitlines()
    assert text[lines[0] - 1].strip() == "{"  # the reported line is where that record starts


def test_missing_files_are_named(tmp_path) -> None:
    with pytest.raises(DataError, match=r"no examples\.json"):
        load_promqa(tmp_path)
