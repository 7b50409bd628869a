"""Item checks that need no solver: option counts, time ranges, answer in question, invalid records."""

from __future__ import annotations

import json
from pathlib import Path

from expvid.audit import AuditOptions, audit_items, audit_release
from expvid.schema import AnswerType, Item, VideoRef


def _item(i: int, *, options: int = 4, question: str = "Which tool?", **extra: object) -> Item:
    letters = "ABCDE"[:options]
    return Item(
        id=f"t/{i}", suite="s", task="t", question=question, answer=letters[i % options], answer_type=AnswerType.CHOICE,
        options={letter: f"tool {letter.lower()}{i}" for letter in letters}, **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def test_option_count_time_ranges_and_answer_in_question() -> None:
    items = [_item(i) for i in range(20)]
    items.append(_item(20, options=3))
    items.append(_item(21, question="What is used between 1:10-1:05?"))
    items.append(_item(22, question="What is used at 0:30 - 2:40?", meta={"video_duration": 120.0}))
    items.append(_item(23, question="What is used at 0:30 - 1:40?", meta={"video_duration": 120.0}))
    items.append(
        _item(
            24, media=VideoRef(path="/nowhere/v.mp4", start=100.0, end=130.0), meta={"video_duration": 90.0}
        )
    )
    items.append(_item(25, question="Which is right, tool b25 or something else?"))  # B: the correct one
    report = audit_items(items, options=AuditOptions(embeddings=False, learned=False))
    flags = {entry.id: entry.flags for entry in report.items}
    assert (
        flags["t/20"] == ["option count"]
        and "3 options where the task's items have 4" in report.item("t/20").reasons["option count"]
    )
    assert (
        flags["t/21"] == ["time range"]
        and "ends (65 s) before it starts (70 s)" in report.item("t/21").reasons["time range"]
    )
    assert (
        flags["t/22"] == ["time range"]
        and "passes the video's end (120.0 s)" in report.item("t/22").reasons["time range"]
    )
    assert flags["t/23"] == [] and flags["t/0"] == []
    assert flags["t/24"] == ["time range"]
    assert flags["t/25"] == ["answer in question"]
    declared = audit_items(items[:3], options=AuditOptions(embeddings=False, option_counts={"t": 5}))
    assert all("option count" in entry.flags for entry in declared.items)


def test_a_record_whose_answer_is_not_an_option_is_an_invalid_record(tmp_path: Path) -> None:
    records = [
        {"id": f"q{i}", "video": f"https://x/videos/Chemistry/{i}.mp4", "question_type": "multiple-choice",
         "metadata": {"subject": "Chemistry"}, "question": "Which?", "choices": {"A": "a", "B": "b"}, "answer": "A"}
        for i in range(3)
    ]  # fmt: skip
    records[1]["answer"] = "F"
    (tmp_path / "validation.json").write_text(json.dumps(records))
    report = audit_release(tmp_path, suite="mmvu", options=AuditOptions(embeddings=False))
    [bad] = [entry for entry in report.items if entry.flags]
    assert (
        bad.id == "q1"
        and bad.flags == ["invalid record"]
        and "is not one of the choices" in bad.reasons["invalid record"]
    )
    assert len(report.problems) == 1 and "validation.json" in report.problems[0]
    assert [entry.id for entry in report.items] == ["q0", "q2", "q1"]
