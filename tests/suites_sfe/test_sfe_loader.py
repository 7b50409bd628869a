"""Loading the SFE English and Chinese sets with their images, gold boxes and cognitive levels."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from expvid.schema import AnswerType, Box, DataError, ImagesRef
from expvid.suites.sfe import SFESuite, load_sfe


def test_both_languages_with_language_prefixed_ids(sfe_dataset) -> None:
    assert len(sfe_dataset.items) == 18 and not sfe_dataset.problems
    assert Counter(item.meta["language"] for item in sfe_dataset.items) == {"en": 9, "zh": 9}
    ids = {item.id for item in sfe_dataset.items}
    assert {"en/A001/0001", "zh/A001/0001"} <= ids and len(ids) == 18
    zh = next(item for item in sfe_dataset.items if item.id == "zh/C001/0003")
    assert zh.question == "该分子含有多少个碳原子？" and zh.answer == ["6"]


def test_tasks_and_gold_boxes(sfe_dataset) -> None:
    tasks = Counter(item.task for item in sfe_dataset.items if item.meta["language"] == "en")
    assert tasks == {"mcq": 2, "exact_match": 3, "open_ended": 2, "grounding": 2}
    e011 = next(item for item in sfe_dataset.items if item.id == "en/E011/0005")
    assert e011.answer_type is AnswerType.BOXES and e011.meta["question_type"] == "exact_match"
    assert e011.answer == [Box(x1=0.1, y1=0.2, x2=0.3, y2=0.4), Box(x1=0.55, y1=0.6, x2=0.8, y2=0.9)]


def test_images_resolved_in_order(sfe_dataset, sfe_dir) -> None:
    item = next(item for item in sfe_dataset.items if item.id == "en/L001/0007")
    assert isinstance(item.media, ImagesRef)
    assert [path.rsplit("/", 1)[-1] for path in item.media.paths] == ["spectrum.png", "peaks.png"]
    assert all(path.startswith(str(sfe_dir.resolve())) for path in item.media.paths)


def test_cognitive_levels(sfe_dataset, sfe_dir, tmp_path) -> None:
    levels = {item.id: item.level for item in sfe_dataset.items if item.meta["language"] == "en"}
    assert levels["en/A001/0001"] == 1 and levels["en/C004/0004"] == 1  # named L1 tasks in §3.2
    assert levels["en/M010/0009"] == 2
    assert levels["en/A010/0002"] == 2  # not named in the paper: the record's own cognitive_level
    assert levels["en/L001/0007"] == 1
    level_file = tmp_path / "levels.json"
    level_file.write_text(json.dumps({"M010": "L3", "A001": 2}))
    suite = SFESuite({"levels": str(level_file)})
    overridden = {item.id: item.level for item in suite.load(sfe_dir).items}
    assert overridden["en/M010/0009"] == 3 and overridden["en/A001/0001"] == 2
    assert overridden["en/A010/0002"] == 2  # the record's own field still wins


def test_language_option(sfe_dir) -> None:
    assert {item.meta["language"] for item in SFESuite().load(sfe_dir).items} == {"en"}
    assert {item.meta["language"] for item in SFESuite({"language": "zh"}).load(sfe_dir).items} == {"zh"}
    assert {item.meta["language"] for item in SFESuite({"languages": ["en", "zh"]}).load(sfe_dir).items} == {
        "en",
        "zh",
    }  # the old spelling of the setting, as older run directories recorded it
    with pytest.raises(ValueError, match="'en', 'zh' or 'both'"):
        SFESuite({"language": "fr"})
    with pytest.raises(ValueError, match="unknown sfe setting 'lang'"):
        SFESuite({"lang": "en"})


def test_image_found_under_images_by_file_name(sfe_dir, tmp_path) -> None:
    shutil.copytree(sfe_dir / "images", tmp_path / "images")
    (tmp_path / "en").mkdir()
    record = json.loads((sfe_dir / "20250515-en" / "sfe.jsonl").read_text().splitlines()[0])
    record["images"] = ["/some/other/machine/SFE_images/galaxy.png"]  # the official lookup uses the base name
    (tmp_path / "en" / "records.jsonl").write_text(json.dumps(record) + "\n")
    (item,) = load_sfe(tmp_path).items
    assert item.media is not None and item.media.paths[0].endswith("images/galaxy.png")  # type: ignore[union-attr]


def test_bad_records_are_reported_by_line(sfe_dir, tmp_path) -> None:
    shutil.copytree(sfe_dir / "images", tmp_path / "images")
    (tmp_path / "en").mkdir()
    lines = (sfe_dir / "20250515-en" / "sfe.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    bad = [
        {**first, "id": "A001/x1", "question_type": "essay"},
        {**first, "id": "A001/x2", "images": ["images/missing.png"]},
        {**first, "id": "E011/x3", "question_type": "exact_match", "answer": "[[0.1,0.2,0.3,0.4]]"},
        {**first, "id": "E011/x4", "question_type": "exact_match", "answer": "[10,20,30,40]"},
        {**first, "id": "A001/x5", "options": ["A: only one"]},
    ]
    (tmp_path / "en" / "sfe.jsonl").write_text("\n".join(lines + [json.dumps(r) for r in bad]) + "\n")
    dataset = load_sfe(tmp_path)
    assert len(dataset.items) == 10  # x2's image is missing: an item, scored as a media failure
    assert [media.key for media in dataset.missing_media()] == ["images/missing.png"]
    messages = {problem.line: problem.message for problem in dataset.problems}
    assert set(messages) == {10, 12, 13, 14}
    assert "question_type 'essay'" in messages[10]
    assert "is not a box list" in messages[12]
    assert "not normalised to 0..1" in messages[13]
    assert "at least two options" in messages[14]
    assert {record.problem.line: record.task for record in dataset.invalid} == {
        10: None, 12: "grounding", 13: "grounding", 14: "mcq"
    }  # fmt: skip


def test_no_records_for_a_language_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(DataError, match="no en records"):
        load_sfe(tmp_path)
