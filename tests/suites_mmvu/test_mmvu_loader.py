"""MMVU's release as published: `validation.json` records with Hub URLs, disciplines from subjects."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from expvid.schema import AnswerType
from expvid.suites.mmvu import MMVUSuite
from expvid.suites.mmvu.suite import DISCIPLINE_OF, DISCIPLINES


def test_the_sample_loads_in_the_published_shapes(mmvu_dataset, mmvu_dir) -> None:
    assert len(mmvu_dataset.items) == 8 and not mmvu_dataset.problems
    by_id = {item.id: item for item in mmvu_dataset.items}
    choice, open_ = by_id["validation_0"], by_id["validation_1"]
    assert choice.task == "multiple_choice" and choice.answer_type is AnswerType.CHOICE
    assert choice.options == {"A": "10.0", "B": "5.0", "C": "12.0", "D": "15.0", "E": "20.0"}
    assert open_.task == "open_ended" and open_.answer == ["Carbon dioxide"] and open_.options is None
    # the Hub URL names the file in the dataset repo: videos/<Subject_with_underscores>/<n>.mp4
    assert choice.media.source_path == "videos/Chemistry/0.mp4"  # type: ignore[union-attr]
    assert Path(choice.media.path) == (mmvu_dir / "videos/Chemistry/0.mp4").resolve()  # type: ignore[union-attr]
    assert (
        choice.meta["video_id"] == open_.meta["video_id"]
    )  # one video, two questions: one bootstrap cluster
    assert {item.discipline for item in mmvu_dataset.items} == set(DISCIPLINES)
    assert mmvu_dataset.file_hashes.keys() == {"validation.json"}


def test_the_27_subjects_fall_into_the_papers_four_disciplines() -> None:
    assert len(DISCIPLINE_OF) == 27
    assert DISCIPLINE_OF["Materials Science"] == "Engineering"  # appendix A.2 (lmms-eval says Science)
    assert DISCIPLINE_OF["Geography"] == "Science" and DISCIPLINE_OF["Dentistry"] == "Healthcare"


def test_bad_records_are_counted_in_their_task_naming_file_and_line(mmvu_dir, tmp_path) -> None:
    root = tmp_path / "mmvu"
    shutil.copytree(mmvu_dir, root)
    records = json.loads((root / "validation.json").read_text())
    records[0]["answer"] = "F"  # not a choice
    records[1]["metadata"]["subject"] = "Alchemy"
    del records[2]["video"]
    records[3]["question_type"] = "true-false"
    records.append(dict(records[4]))  # a duplicate id
    records[5]["video_path"] = "videos/Art/0.mp4"  # lmms-eval's copy names the file directly
    del records[5]["video"]
    (root / "validation.json").write_text(json.dumps(records, indent=4))
    dataset = MMVUSuite().load(root)
    messages = {problem.line: problem.message for problem in dataset.problems}
    assert len(dataset.invalid) == 5 and len(dataset.items) == 4
    assert any("answer 'F' is not one of the choices" in m for m in messages.values())
    assert any("subject 'Alchemy'" in m for m in messages.values())
    assert any("no video" in m for m in messages.values())
    assert any("question_type 'true-false'" in m for m in messages.values())
    assert any("duplicate id 'validation_4'" in m for m in messages.values())
    assert {record.task for record in dataset.invalid} == {"multiple_choice", "open_ended", None}
    assert all(str(problem).startswith(str(root / "validation.json") + ":") for problem in dataset.problems)
    assert next(i for i in dataset.items if i.id == "validation_5").media.source_path == "videos/Art/0.mp4"  # type: ignore[union-attr]
