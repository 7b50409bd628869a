"""The ExpVid loader on hand-written, partly broken release files.

Every bad line becomes a `file:line: message` problem, counted as an invalid record of its task,
and the good lines still load; a record whose video is missing still loads (it is scored as a
media failure); strict mode raises one error listing every problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from expvid.schema import DataError
from expvid.suites.expvid_suite import TASKS, load_expvid

CLIP = "videos/level_1/100/clip_1.mp4"
L3 = "videos/level_3/100_.mp4"
SEGMENT = "videos/level_2/video_segments/100/clip_2.mp4"
PREDICTION = "videos/level_2/step_prediction/100/clip_2_prediction.mp4"

WriteRelease = Callable[[Path, dict[str, list[Any]], list[str]], Path]  # the `write_release` fixture


def _mcq(record_id: Any, **changes: Any) -> dict[str, Any]:
    record = {
        "id": record_id,
        "video_path": CLIP,
        "question": "Which tool is being used in this experimental step?",
        "options": {"A": "pipette", "B": "burette", "C": "spatula", "D": "forceps"},
        "answer": "A",
        "asr_caption": "Add 500 microliters with a pipette.",
        "video_id": "100",
        "category": "Biology",
    }
    record.update(changes)
    return record


def _plain(record_id: Any, video: str, question: str, answer: Any) -> dict[str, Any]:
    return {
        "id": record_id,
        "video_path": video,
        "question": question,
        "answer": answer,
        "asr_caption": "",
        "video_id": 100,
        "category": "Chemistry",
    }


@pytest.fixture
def broken_release(tmp_path: Path, write_release: WriteRelease) -> Path:
    missing_category = _mcq(2)
    del missing_category["category"]
    files: dict[str, list[Any]] = {
        "tools": [
            _mcq(0),  # 1 good
            '{"id": 1, "video_path": ',  # 2 bad JSON
            missing_category,  # 3 missing field
            _mcq(3, answer="E"),  # 4 answer not among the options
            _mcq(4, video_path="videos/level_1/100/clip_404.mp4"),  # 5 missing video: still an item
            "",  # 6 blank: skipped, not a problem
            _mcq(5, difficulty="hard", options={"A": "pipette", "B": "burette", "C": "spatula"}),  # 7 good
            _mcq(0),  # 8 duplicate id
            "[1, 2, 3]",  # 9 JSON but not an object
        ],
        "experimental_conclusion": [
            _plain(0, L3, "Question: it used __ under _______ light.", ["copper", "blue"]),  # 1 good
            _plain(1, L3, "Question: ___ and ____ gave _____.", ["a", "b"]),  # 2 blank-count mismatch
        ],
        "step_prediction": [
            _plain(0, PREDICTION, "Full Step List:\nMix\n2. Heat", 7),  # 1 int
            _plain(1, PREDICTION, "Full Step List:\nMix\n2. Heat", " 12 "),  # 2 numeric string
            _plain(2, PREDICTION, "Full Step List:\nMix\n2. Heat", "twelve"),  # 3 not a number
            _plain(3, PREDICTION, "Full Step List:\nMix\n2. Heat", True),  # 4 a bool is not a step
        ],
        "sequence_generation": [
            _plain(0, SEGMENT, "Full Step List:\n1. Mix", ["13", "14", "15"]),  # 1 strings
            _plain(1, SEGMENT, "Full Step List:\n1. Mix", [3, "4"]),  # 2 mixed
            _plain(2, SEGMENT, "Full Step List:\n1. Mix", []),  # 3 empty
        ],
    }
    return write_release(tmp_path / "release", files, [CLIP, L3, SEGMENT, PREDICTION])


def _problem_map(root: Path, **kwargs: Any) -> dict[tuple[str, int], str]:
    dataset = load_expvid(root, **kwargs)
    return {(p.path.relative_to(dataset.root).as_posix(), p.line): p.message for p in dataset.problems}


def test_each_bad_line_is_reported_with_file_and_line(broken_release: Path) -> None:
    dataset = load_expvid(broken_release)
    tools, l3 = TASKS["tools"].path, TASKS["experimental_conclusion"].path
    pred, gen = TASKS["step_prediction"].path, TASKS["sequence_generation"].path
    problems = _problem_map(broken_release)
    assert set(problems) == {
        (tools, 2),
        (tools, 3),
        (tools, 4),
        (tools, 8),
        (tools, 9),
        (l3, 2),
        (pred, 3),
        (pred, 4),
        (gen, 3),
    }
    assert problems[(tools, 2)].startswith("not valid JSON")
    assert problems[(tools, 3)] == "missing field(s): category"
    assert problems[(tools, 4)] == "answer 'E' is not one of the options ['A', 'B', 'C', 'D']"
    assert problems[(tools, 8)] == "duplicate id 0 (first on line 1)"
    assert problems[(tools, 9)] == "expected a JSON object, got list"
    assert problems[(l3, 2)].startswith(
        "question has 3 blank(s) (runs of 2+ underscores) but the answer has 2"
    )
    assert "step number" in problems[(pred, 3)] and "'twelve'" in problems[(pred, 3)]
    assert "True" in problems[(pred, 4)]
    assert "non-empty list" in problems[(gen, 3)]
    # Rendered as file:line: message, with the full path of the file.
    rendered = [str(p) for p in dataset.problems]
    assert f"{dataset.root / tools}:4: answer 'E' is not one of the options ['A', 'B', 'C', 'D']" in rendered

    # Every problem is an invalid record of its task, in file order; nothing is lost.
    invalid = dataset.invalid_by_task()
    assert [record.problem.line for record in invalid["tools"]] == [2, 3, 4, 8, 9]
    assert [record.source_id for record in invalid["tools"]] == [None, "2", "3", "0", None]
    assert invalid["tools"][2].id == "tools/invalid@tools.jsonl:4"
    assert not dataset.unreadable
    # Everything else still loads, the record whose video is missing included.
    loaded = {item.id: item for item in dataset}
    assert [media.key for media in dataset.missing_media()] == ["videos/level_1/100/clip_404.mp4"]
    assert set(loaded) == {
        "tools/0",
        "tools/4",
        "tools/5",
        "experimental_conclusion/0",
        "step_prediction/0",
        "step_prediction/1",
        "sequence_generation/0",
        "sequence_generation/1",
    }
    assert loaded["tools/5"].meta == {"video_id": "100", "difficulty": "hard"}  # unknown field kept
    assert loaded["tools/5"].options == {"A": "pipette", "B": "burette", "C": "spatula"}
    assert loaded["experimental_conclusion/0"].answer == ["copper", "blue"]
    assert loaded["experimental_conclusion/0"].meta == {"video_id": "100"}  # int video id -> str
    assert loaded["step_prediction/0"].answer == 7
    assert loaded["step_prediction/1"].answer == 12
    assert loaded["sequence_generation/0"].answer == [13, 14, 15]
    assert loaded["sequence_generation/1"].answer == [3, 4]


def test_strict_mode_lists_all_problems(broken_release: Path) -> None:
    lenient = load_expvid(broken_release)
    with pytest.raises(DataError) as caught:
        load_expvid(broken_release, strict=True)
    assert caught.value.problems == lenient.problems
    message = str(caught.value)
    assert message.startswith(f"{len(lenient.problems)} problem(s) in the data:")
    for problem in lenient.problems:
        assert str(problem) in message


def test_every_record_is_an_item_or_an_invalid_record(broken_release: Path) -> None:
    dataset = load_expvid(broken_release)
    for spec in dataset.tasks:
        lines = [line for line in (dataset.root / spec.path).read_text().splitlines() if line.strip()]
        items = [item for item in dataset if item.task == spec.name]
        invalid = dataset.invalid_by_task().get(spec.name, [])
        assert len(items) + len(invalid) == len(lines), spec.name
    assert dataset.invalid_by_task().get(None) is None  # ExpVid: the file names the task


def test_missing_task_files_matter_only_when_requested(broken_release: Path) -> None:
    everything = load_expvid(broken_release)
    assert not any("not found" in p.message and p.line == 0 for p in everything.problems)
    assert [spec.name for spec in everything.tasks] == [
        "tools",
        "sequence_generation",
        "step_prediction",
        "experimental_conclusion",
    ]

    asked = load_expvid(broken_release, tasks=["tools", "materials"])
    missing = [p for p in asked.problems if p.line == 0]
    assert len(missing) == 1 and asked.unreadable == missing  # its records cannot be counted
    assert missing[0].path == asked.root / TASKS["materials"].path
    assert missing[0].message == "annotation file for task 'materials' not found"
    assert {item.task for item in asked} == {"tools"}


def test_unusable_roots_and_task_names_raise(tmp_path: Path, broken_release: Path) -> None:
    with pytest.raises(DataError, match="not a directory"):
        load_expvid(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no ExpVid annotation files found"):
        load_expvid(tmp_path / "empty")
    with pytest.raises(DataError, match="unknown ExpVid task 'verification'"):
        load_expvid(broken_release, tasks=["verification"])


def test_wrong_field_types_are_problems(tmp_path: Path, write_release: WriteRelease) -> None:
    root = write_release(
        tmp_path / "types",
        {
            "tools": [
                _mcq(0, question=["not", "text"]),
                _mcq(1, options=["pipette", "burette"]),
                _mcq(2, options={"A": "pipette", "K": "burette"}),
                _mcq(3, asr_caption=5),
                _mcq(None),
                _mcq(5, video_id=""),
                _mcq(6, asr_caption=None),
            ]
        },
        [CLIP],
    )
    problems = _problem_map(root)
    tools = TASKS["tools"].path
    assert problems[(tools, 1)] == "question must be a string, got list"
    assert problems[(tools, 2)].startswith("options must be an object")
    assert problems[(tools, 3)] == "option keys must be letters A-J, got ['K']"
    assert problems[(tools, 4)] == "asr_caption must be a string, got int"
    assert problems[(tools, 5)] == "id must be a non-empty string or an integer, got None"
    assert problems[(tools, 6)].startswith("video_id must be a non-empty string")
    assert (tools, 7) not in problems  # a null caption is allowed: no narration
    assert load_expvid(root).get("tools/6").context is None


def test_a_line_that_is_not_text_is_one_invalid_record(tmp_path: Path, write_release: WriteRelease) -> None:
    root = write_release(tmp_path / "binary", {"tools": [_mcq(0)], "materials": [_mcq(0), _mcq(1)]}, [CLIP])
    path = root / TASKS["materials"].path
    good = path.read_bytes()
    path.write_bytes(good + b"\xff\xfe garbage\n" + json.dumps(_mcq(2)).encode() + b"\n")
    dataset = load_expvid(root)
    assert [(p.path, p.line) for p in dataset.problems] == [(dataset.root / TASKS["materials"].path, 3)]
    assert dataset.problems[0].message == "not UTF-8 text (invalid start byte at column 1)"
    assert [record.task for record in dataset.invalid] == ["materials"]
    # The rest of that file, and the other file, still load.
    assert {item.id for item in dataset} == {"tools/0", "materials/0", "materials/1", "materials/2"}
