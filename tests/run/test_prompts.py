"""ExpVid F.4 prompts: snapshots for all ten tasks, plus exact checks of the verbatim instructions.

Snapshots live in tests/run/snapshots/<task>.txt (the first sample item of each task). After an
intended change, regenerate them with EXPVID_UPDATE_SNAPSHOTS=1 and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from expvid.schema import Item
from expvid.suites.expvid_eval import ExpVidSuite, step_numbers_in
from expvid.suites.expvid_prompts import build_prompt
from expvid.suites.expvid_suite import EXPVID_TASKS, load_expvid

SNAPSHOTS = Path(__file__).parent / "snapshots"

MCQ = (
    "Solve the multiple choice question based on the video. Provide your final answer as a single letter "
    "enclosed in \\boxed{}."
)


@pytest.mark.parametrize("task", [spec.name for spec in EXPVID_TASKS])
def test_prompt_snapshot(sample_dir, task):
    item = load_expvid(sample_dir, tasks=[task]).items[0]
    text = build_prompt(item)
    path = SNAPSHOTS / f"{task}.txt"
    if os.environ.get("EXPVID_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _item(**fields: object) -> Item:
    base: dict[str, object] = {"id": "t/1", "suite": "expvid", "task": "t", "question": "q"}
    base.update(fields)
    return Item.model_validate(base)


def test_level1_layout_is_f4():
    item = _item(
        task="materials",
        level=1,
        question="Which material appears in this experimental step?",
        options={
            "A": "collected pellets",
            "B": "agarose beads",
            "C": "silica gel packets",
            "D": "lyophilized powder",
        },
        answer="B",
        answer_type="choice",
        context="Add the agarose beads to the tube.",
    )
    assert build_prompt(item) == (
        f"{MCQ}\n\nQuestion: Which material appears in this experimental step?\n\nOptions:\n"
        "A: collected pellets\nB: agarose beads\nC: silica gel packets\nD: lyophilized powder"
    )
    # The narration only appears in the ablation, between instruction and question.
    assert "agarose beads to the tube" not in build_prompt(item)
    with_asr = build_prompt(item, with_asr=True)
    assert with_asr.index("agarose beads to the tube") < with_asr.index("Question:")


def test_level2_mcq_has_no_question_prefix_and_options_up_to_j():
    options = {letter: str(n) for n, letter in enumerate("ABCDEFGHIJ", start=1)}
    item = _item(
        task="video_verification",
        level=2,
        question="Given the complete step list, which step was *not* performed in the video?",
        options=options,
        answer="J",
        answer_type="choice",
    )
    text = build_prompt(item)
    assert "Question:" not in text and text.endswith("I: 9\nJ: 10")


def test_other_instructions_are_verbatim():
    generation = _item(
        level=2,
        question="Based on the full step list ...\n1. a\n2. b",
        answer=[1],
        answer_type="step_sequence",
    )
    prediction = _item(
        level=2, question="Given all steps ...\na\n2. b\n3. c", answer=2, answer_type="step_number"
    )
    blanks = _item(
        level=3,
        question="Title: X\nDiscipline: Y\nQuestion: a ___ b ____.",
        answer=["x", "y"],
        answer_type="blanks",
    )
    assert build_prompt(generation).startswith(
        "Solve the following question based on the video. Provide your final answer as a list of numbers "
        "(comma-separated) enclosed in \\boxed{}.\n\n"
    )
    assert build_prompt(prediction).startswith(
        "Solve the following question based on the video. Provide your final answer as a single number "
        "enclosed in \\boxed{}.\n\n"
    )
    assert build_prompt(blanks) == (
        "Solve the following fill-in-the-blank question based on the video. Provide your final answer as a list "
        "of words or phrases (comma-separated) enclosed in \\boxed{ }.\n\nTitle: X\nDiscipline: Y\nQuestion: a ___ b ____."
    )
    # step_prediction lists have no "1." before their first step: step 1 is still a candidate.
    assert step_numbers_in(prediction.question) == [1, 2, 3]
    assert ExpVidSuite().hints(prediction).step_numbers == [1, 2, 3]


def test_messages_put_frames_first_then_the_text():
    from expvid.models.types import ImagePart, TextPart

    item = _item(task="tools", level=1, options={"A": "a", "B": "b"}, answer="A", answer_type="choice")
    images = [ImagePart(data=bytes([i])) for i in range(3)]
    (message,) = ExpVidSuite().messages(item, images)
    assert [type(p) for p in message.content] == [ImagePart, ImagePart, ImagePart, TextPart]
    assert [p.data for p in message.content[:3]] == [b"\x00", b"\x01", b"\x02"]
