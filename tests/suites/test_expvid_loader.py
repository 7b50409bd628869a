"""The ExpVid loader on a generated release: every task, every field, texts kept verbatim."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from expvid.schema import AnswerType, Item
from expvid.schema.dataset import Dataset
from expvid.suites.expvid_suite import EXPVID_TASKS, SUITE, TASKS, load_expvid, task_spec


def test_task_table_matches_the_paper() -> None:
    assert [spec.name for spec in EXPVID_TASKS] == [
        "tools",
        "materials",
        "quantity",
        "operation",
        "sequence_ordering",
        "sequence_generation",
        "video_verification",
        "step_prediction",
        "experimental_conclusion",
        "scientific_discovery",
    ]
    columns = [spec.column for spec in EXPVID_TASKS]
    assert columns == ["Tool", "Mat.", "Quan.", "Oper.", "Ord.", "Gen.", "Veri.", "Pred.", "Anal.", "Disc."]
    assert TASKS["video_verification"].paper_name == "Completeness Verification"
    assert TASKS["experimental_conclusion"].paper_name == "Experimental Analysis"
    for spec in EXPVID_TASKS:
        assert spec.path == f"annotations/level{spec.level}/{spec.name}.jsonl"
    assert TASKS["sequence_generation"].answer_type is AnswerType.STEP_SEQUENCE
    assert TASKS["sequence_generation"].metric == "jaccard"
    assert TASKS["step_prediction"].answer_type is AnswerType.STEP_NUMBER
    assert {TASKS[t].answer_type for t in ("experimental_conclusion", "scientific_discovery")} == {
        AnswerType.BLANKS
    }
    with pytest.raises(ValueError, match=r"unknown ExpVid task 'tool'.*tools, materials"):
        task_spec("tool")


def test_loads_all_ten_tasks_with_file_line_counts(
    sample_dataset: Dataset, raw_records: dict[str, list[dict[str, Any]]]
) -> None:
    assert sample_dataset.problems == []
    assert [spec.name for spec in sample_dataset.tasks] == [spec.name for spec in EXPVID_TASKS]
    counts = {task: len(items) for task, items in sample_dataset.by_task().items()}
    assert counts == {task: len(records) for task, records in raw_records.items()}
    assert len(sample_dataset) == sum(counts.values())
    assert all(count >= 5 for count in counts.values()), counts


def test_items_carry_every_field_of_their_record(
    sample_dir: Path, sample_dataset: Dataset, raw_records: dict[str, list[dict[str, Any]]]
) -> None:
    by_task = sample_dataset.by_task()
    root = sample_dir.resolve()
    for task, records in raw_records.items():
        spec = TASKS[task]
        for item, record in zip(by_task[task], records, strict=True):
            assert item.id == f"{task}/{record['id']}"
            assert item.source_id == str(record["id"])
            assert (item.suite, item.task, item.level) == (SUITE, task, spec.level)
            assert item.answer_type is spec.answer_type
            assert item.discipline == record["category"]
            assert item.context == record["asr_caption"]
            assert item.meta == {"video_id": record["video_id"]}
            assert item.question == record["question"]  # byte for byte
            assert item.media is not None and item.media.kind == "video"
            assert item.media.source_path == record["video_path"]
            assert Path(item.media.path).is_absolute()
            assert Path(item.media.path) == root / record["video_path"]
            assert Path(item.media.path).is_file()
            if spec.answer_type is AnswerType.CHOICE:
                assert item.options == record["options"]
                assert item.answer == record["answer"]
            else:
                assert item.options is None
    ids = [item.id for item in sample_dataset]
    assert len(ids) == len(set(ids))
    source_ids = [item.source_id for item in sample_dataset]
    assert len(set(source_ids)) < len(source_ids)  # release ids repeat across files; ours do not


def test_answers_are_normalised_to_their_type(
    sample_dataset: Dataset, raw_records: dict[str, list[dict[str, Any]]]
) -> None:
    by_task = sample_dataset.by_task()
    raw_prediction = [record["answer"] for record in raw_records["step_prediction"]]
    assert {type(answer) for answer in raw_prediction} == {int, str}  # the release mixes both
    assert [item.answer for item in by_task["step_prediction"]] == [int(a) for a in raw_prediction]
    assert all(type(item.answer) is int for item in by_task["step_prediction"])

    for item, record in zip(by_task["sequence_generation"], raw_records["sequence_generation"], strict=True):
        assert all(isinstance(value, str) for value in record["answer"])
        assert item.answer == [int(value) for value in record["answer"]]

    for task in ("experimental_conclusion", "scientific_discovery"):
        for item, record in zip(by_task[task], raw_records[task], strict=True):
            assert item.answer == record["answer"]
            assert item.n_blanks == len(record["answer"]) >= 1


def test_question_texts_are_verbatim(sample_dataset: Dataset) -> None:
    by_task = sample_dataset.by_task()
    with_full_width = [item for item in sample_dataset if "，" in item.question]
    assert {item.level for item in with_full_width} >= {1, 3}
    for item in by_task["step_prediction"]:
        listing = item.question.split("Full Step List:\n", 1)[1]
        first, second = listing.split("\n")[:2]
        assert not first.startswith("1. ")  # the release's quirk, kept
        assert second.startswith("2. ")
    for item in by_task["sequence_generation"]:
        assert "Full Step List:\n1. " in item.question


def test_dataset_lookup_and_task_filter(sample_dir: Path, sample_dataset: Dataset) -> None:
    item: Item = sample_dataset.get("video_verification/0")
    assert item.task == "video_verification" and item.source_id == "0"
    with pytest.raises(KeyError, match="video_verification/9999"):
        sample_dataset.get("video_verification/9999")

    subset = load_expvid(sample_dir, tasks=["step_prediction", "tools", "tools"])
    assert [spec.name for spec in subset.tasks] == ["tools", "step_prediction"]  # canonical order
    assert {item.task for item in subset} == {"tools", "step_prediction"}
    assert subset.fingerprint() != sample_dataset.fingerprint()


def test_fingerprint_covers_annotations_and_media_not_location(
    sample_dir: Path, sample_dataset: Dataset, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(sample_dir, copy)
    moved = load_expvid(copy)
    assert moved.fingerprint() == sample_dataset.fingerprint()  # another place, the same bytes
    assert len(moved.fingerprint()) == 64

    # A partial download (one video missing) and a damaged one (a video of another size) differ,
    # while the annotations alone are the same.
    video = copy / sample_dataset.items[0].media.source_path  # type: ignore[union-attr]
    data = video.read_bytes()
    video.unlink()
    partial = load_expvid(copy)
    assert partial.fingerprint() != sample_dataset.fingerprint()
    assert partial.annotations_fingerprint() == sample_dataset.annotations_fingerprint()
    video.write_bytes(data[: len(data) // 2])
    assert load_expvid(copy).fingerprint() not in (sample_dataset.fingerprint(), partial.fingerprint())
    video.write_bytes(data)
    assert load_expvid(copy).fingerprint() == sample_dataset.fingerprint()

    path = copy / TASKS["quantity"].path
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"answer": "A"', '"answer": "B"', 1), encoding="utf-8")
    assert load_expvid(copy).fingerprint() != sample_dataset.fingerprint()
    assert load_expvid(copy).annotations_fingerprint() != sample_dataset.annotations_fingerprint()
