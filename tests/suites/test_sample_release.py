"""The generated release follows the real one: layout, fields, and items built as the paper says."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from expvid.schema import count_blanks
from expvid.suites.expvid_suite import EXPVID_TASKS
from expvid.suites.sample.quantities import parse_quantity

FIELDS_MCQ = ["id", "video_path", "question", "options", "answer", "asr_caption", "video_id", "category"]
FIELDS_PLAIN = ["id", "video_path", "question", "answer", "asr_caption", "video_id", "category"]
PATHS = {
    "tools": r"videos/level_1/(\d+)/clip_(\d+)\.mp4",
    "sequence_ordering": r"videos/level_2/video_segments/(\d+)/clip_(\d+)\.mp4",
    "sequence_generation": r"videos/level_2/video_segments/(\d+)/clip_(\d+)\.mp4",
    "step_prediction": r"videos/level_2/step_prediction/(\d+)/clip_(\d+)_prediction\.mp4",
    "video_verification": r"videos/level_2/video_verification/(\d+)/clip_(\d+)_removed_step_(\d+)\.mp4",
    "experimental_conclusion": r"videos/level_3/(\d+)_\.mp4",
}
PATHS |= {"materials": PATHS["tools"], "quantity": PATHS["tools"], "operation": PATHS["tools"]}
PATHS["scientific_discovery"] = PATHS["experimental_conclusion"]

Records = dict[str, list[dict[str, Any]]]


def _steps(truth: dict[str, Any], video_id: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = truth["experiments"][video_id]["steps"]
    return steps


def test_layout_fields_and_paths_are_the_releases(sample_dir: Path, raw_records: Records) -> None:
    for spec in EXPVID_TASKS:
        assert (sample_dir / spec.path).is_file()
        records = raw_records[spec.name]
        assert [r["id"] for r in records] == list(range(len(records)))
        for record in records:
            expected = FIELDS_MCQ if spec.answer_type.value == "choice" else FIELDS_PLAIN
            assert list(record) == expected, (spec.name, record["id"])
            match = re.fullmatch(PATHS[spec.name], record["video_path"])
            assert match, record["video_path"]
            assert match.group(1) == record["video_id"]
            assert (sample_dir / record["video_path"]).is_file()
    assert not list((sample_dir / "annotations").rglob("*truth*"))  # the sidecar is not a task


def test_several_items_per_task_across_disciplines(
    raw_records: Records, sample_truth: dict[str, Any]
) -> None:
    kept = [vid for vid, e in sample_truth["experiments"].items() if e["curation"] == "keep"]
    assert len(kept) >= 6
    disciplines = {sample_truth["experiments"][vid]["discipline"] for vid in kept}
    assert len(disciplines) >= 3
    for task, records in raw_records.items():
        assert len(records) >= 6, task
        assert {r["video_id"] for r in records} == set(kept), task
    for level_tasks in (EXPVID_TASKS[:4], EXPVID_TASKS[4:8], EXPVID_TASKS[8:]):
        captions = [r["asr_caption"] for spec in level_tasks for r in raw_records[spec.name]]
        assert "" in captions and any(captions), "each level has empty and non-empty asr_caption"


def test_level1_options_are_balanced_and_plausible(
    raw_records: Records, sample_truth: dict[str, Any]
) -> None:
    for task in ("tools", "materials", "quantity", "operation"):
        letters = Counter(r["answer"] for r in raw_records[task])
        assert set(letters) == {"A", "B", "C", "D"}
        assert max(letters.values()) - min(letters.values()) <= 1, (task, letters)
        for record in raw_records[task]:
            options = record["options"]
            assert list(options) == ["A", "B", "C", "D"]
            assert len({text.casefold() for text in options.values()}) == 4
            step = int(re.search(r"clip_(\d+)", record["video_path"]).group(1))  # type: ignore[union-attr]
            text = _steps(sample_truth, record["video_id"])[step - 1]["text"]
            assert text  # the clip is one real step of the experiment
    for record in raw_records["quantity"]:
        parsed = [parse_quantity(text) for text in record["options"].values()]
        units = {q.unit.rstrip("s").removesuffix("e") if q.unit.isalpha() else q.unit for q in parsed}
        assert len(units) == 1, record["options"]  # distractors in the same unit
        truth = parse_quantity(record["options"][record["answer"]]).value
        if parsed[0].unit == "°C":  # common lab temperatures nearby
            assert all(abs(q.value - truth) <= 35 for q in parsed), record["options"]
        else:  # nearby multiples
            assert all(truth / 4.5 <= q.value <= truth * 4.5 for q in parsed), record["options"]


def test_sequence_items_match_the_clip_steps(raw_records: Records, sample_truth: dict[str, Any]) -> None:
    clips = sample_truth["clips"]
    for ordering, generation in zip(
        raw_records["sequence_ordering"], raw_records["sequence_generation"], strict=True
    ):
        assert ordering["video_path"] == generation["video_path"]  # the release shares segment clips
        shown = clips[generation["video_path"]]["steps"]
        steps = _steps(sample_truth, generation["video_id"])
        assert generation["answer"] == [str(n) for n in shown]
        full_list = "\n".join(f"{s['number']}. {s['text']}" for s in steps)
        assert generation["question"].endswith("Full Step List:\n" + full_list)

        correct = "\n".join(f"{i}. {steps[n - 1]['text']}" for i, n in enumerate(shown, start=1))
        options = ordering["options"]
        assert options[ordering["answer"]] == correct
        assert len(set(options.values())) == 4
        for text in options.values():  # every option orders the same steps
            assert sorted(line.split(". ", 1)[1] for line in text.split("\n")) == sorted(
                steps[n - 1]["text"] for n in shown
            )
    letters = Counter(r["answer"] for r in raw_records["sequence_ordering"])
    assert max(letters.values()) - min(letters.values()) <= 1


def test_completeness_verification_removes_one_non_final_step(
    raw_records: Records, sample_truth: dict[str, Any]
) -> None:
    for record in raw_records["video_verification"]:
        clip = sample_truth["clips"][record["video_path"]]
        stage_steps = clip["steps"] + [clip["removed_step"]]
        stage = [
            s
            for s in sample_truth["experiments"][record["video_id"]]["stages"]
            if clip["removed_step"] in s["steps"]
        ]
        assert len(stage) == 1 and sorted(stage_steps) == stage[0]["steps"]
        local = stage[0]["steps"].index(clip["removed_step"]) + 1
        assert local < len(stage[0]["steps"]), "never the final step"
        options = record["options"]
        assert 3 <= len(options) <= 10
        assert options == {letter: str(i) for i, letter in enumerate("ABCDEFGHIJ"[: len(options)], start=1)}
        assert options[record["answer"]] == str(local)
        assert record["video_path"].endswith(f"_removed_step_{local}.mp4")  # leaked, as released
        assert "Step List:\n1. " in record["question"]


def test_step_prediction_removes_the_final_step(raw_records: Records, sample_truth: dict[str, Any]) -> None:
    for record in raw_records["step_prediction"]:
        clip = sample_truth["clips"][record["video_path"]]
        stage = [
            s
            for s in sample_truth["experiments"][record["video_id"]]["stages"]
            if clip["removed_step"] in s["steps"]
        ]
        assert stage[0]["steps"][-1] == clip["removed_step"]
        assert len(clip["steps"]) >= 3
        assert int(record["answer"]) == clip["removed_step"]


def test_level3_blanks_vary_and_answers_come_from_the_paper(sample_dir: Path, raw_records: Records) -> None:
    lengths = set()
    for task in ("experimental_conclusion", "scientific_discovery"):
        for record in raw_records[task]:
            title, discipline, question = record["question"].split("\n")
            assert title.startswith("Title: ") and question.startswith("Question: ")
            assert discipline == f"Discipline: {record['category']}"
            assert count_blanks(record["question"]) == len(record["answer"])
            lengths |= {len(run) for run in re.findall(r"_{2,}", record["question"])}
            paper = (sample_dir / "sources" / record["video_id"] / "paper.md").read_text(encoding="utf-8")
            for answer in record["answer"]:
                assert answer.casefold() in paper.casefold(), (record["video_id"], answer)
    assert len(lengths) >= 4, lengths
    assert any("，" in r["question"] for r in raw_records["scientific_discovery"])
