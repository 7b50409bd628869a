"""The official direct prompt, its model-family post prompts, the CoT settings and `-S keep_times=true`.

The expected texts are the strings of the current lmms-eval `scivideobench.yaml`
(`lmms_eval_specific_kwargs`), written out here so a change to the prompt files shows up.
"""

from __future__ import annotations

import pytest

from expvid.schema import AnswerType, Item
from expvid.scoring import extract_answer
from expvid.suites.scivideobench import SciVideoBenchSuite, build_prompt
from expvid.suites.settings import SettingsError

#: `lmms_eval_specific_kwargs.default.post_prompt_cot` of the task file (curly quotes as published).
OFFICIAL_COT = (
    "\nAnswer the given question step-by-step. Begin by explaining your reasoning process clearly. "
    "Conclude by stating the final answer using the following format: \u201cTherefore, the final answer is: "
    "$LETTER\u201d (without quotes), where $LETTER is one of the options. Think step by step before answering."
)
DEFAULT_POST = "\nAnswer with the option's letter from the given choices directly."

OPTIONS = "\n".join(
    f"{letter}. {text} (ice)"
    for letter, text in [
        ("A", "To keep the enzyme inactive until the substrate is added"),
        ("B", "To speed up the reaction"),
        ("C", "To prevent evaporation of the buffer"),
        ("D", "To lower the pH"),
        ("E", "To denature the protein"),
        ("F", "To sterilise the tube"),
        ("G", "To dissolve the pellet"),
        ("H", "To calibrate the thermometer"),
        ("I", "To mix the phases"),
        ("J", "To remove air bubbles"),
    ]
)


def _item(dataset, item_id):
    return next(item for item in dataset.items if item.id == item_id)


def test_official_direct_prompt(svb_dataset) -> None:
    item = _item(svb_dataset, "10001/1/conceptual")
    expected = (
        "Between frame 4 to frame 9 the researcher adds the buffer. Why is the tube kept on ice at frame 12?\n"
        + OPTIONS
        + "\n\nAnswer with the option's letter from the given choices directly."
    )
    assert build_prompt(item) == expected
    assert SciVideoBenchSuite().prompt_text(item) == expected


def test_keep_times_sends_the_question_as_written(svb_dataset) -> None:
    item = _item(svb_dataset, "10001/1/conceptual")
    prompt = SciVideoBenchSuite({"keep_times": "true"}).prompt_text(item)
    assert prompt.startswith(
        "Between 0:04-0:09 the researcher adds the buffer. Why is the tube kept on ice at 00:12?\nA. "
    )


def test_list_options_are_lettered_in_order(svb_dataset) -> None:
    item = _item(svb_dataset, "10001/1/quantitative")
    lines = build_prompt(item).splitlines()
    assert (
        lines[0]
        == "The stock is diluted frame 110 at frame 15 from a 50 mM solution. What is the final concentration?"
    )
    assert lines[1:4] == ["A. 0.2 mM", "B. 0.4 mM", "C. 1.0 mM"] and lines[10] == "J. 50 mM"


@pytest.mark.parametrize(
    ("family", "ending"),
    [
        ("gpt4v", "\nAnswer the question with A, B, C, D, E, F, G, H, I or J."),
        # The current task file's llava_vid entry is the default text (its first commit's differed).
        ("llava_vid", "\n" + DEFAULT_POST),
        ("default", "\n" + DEFAULT_POST),
    ],
)
def test_model_family_post_prompts(svb_dataset, family: str, ending: str) -> None:
    prompt = SciVideoBenchSuite({"post_prompt": family}).prompt_text(svb_dataset.items[0])
    assert prompt.endswith("J. To remove air bubbles (ice)" + ending)


def test_gpt4o_preset_selects_the_gpt4v_post_prompt_as_lmms_eval_does_by_model() -> None:
    def post_prompt(**settings: str) -> str | None:
        return SciVideoBenchSuite(settings).settings.post_prompt

    assert post_prompt(frame_preset="gpt-4o") == "gpt4v"
    assert post_prompt(frame_preset="llava-next-video") == "llava_vid"
    assert (
        post_prompt(frame_preset="qwen2.5-vl") == "default"
        and post_prompt(frame_preset="gemini") == "default"
    )
    assert post_prompt(frame_preset="gpt-4o", post_prompt="default") == "default"  # the user's choice wins
    assert post_prompt(frame_preset="gpt-4o", cot="true") is None  # CoT replaces the post prompt


@pytest.mark.parametrize("cot", [True, "true", "official"])
def test_default_cot_is_the_tasks_own_post_prompt_cot(svb_dataset, cot) -> None:
    item = _item(svb_dataset, "10001/1/conceptual")
    suite = SciVideoBenchSuite({"cot": cot})
    prompt = suite.prompt_text(item)
    expected = (
        "Between frame 4 to frame 9 the researcher adds the buffer. Why is the tube kept on ice at frame 12?\n"
        + OPTIONS
        + "\n"
        + OFFICIAL_COT
    )
    assert prompt == expected
    assert suite.generation_defaults().max_tokens == 1024


@pytest.mark.parametrize(
    "reply",
    [
        "Frame 4 shows the buffer. A is wrong since ... Therefore, the final answer is: B",
        "Looking at the video ... Therefore, the final answer is: \u201cB\u201d",
        "Step 1: ...\n\n**Therefore, the final answer is: B**",
        "Reasoning ... Therefore, the final answer is: $B$",
        "Reasoning ... Therefore, the final answer is: (B) To speed up the reaction",
        "I considered A first. Therefore, the final answer is B.",
        "Reasoning ... Therefore, the final answer is: $\\boxed{B}$",
    ],
)
def test_cot_wording_is_read_by_the_strict_extraction(svb_dataset, reply: str) -> None:
    item = _item(svb_dataset, "10001/1/conceptual")
    extraction = SciVideoBenchSuite().extract(reply, item)
    assert extraction.ok and extraction.value == "B", extraction


def test_cot_statement_outranks_letters_in_the_reasoning() -> None:
    item = Item(
        id="v/1/conceptual",
        suite="scivideobench",
        task="conceptual",
        question="q",
        answer="C",
        answer_type=AnswerType.CHOICE,
        options={letter: f"option {letter}" for letter in "ABCDEFGHIJ"},
    )
    reply = "Option A is correct at first sight, but the answer is not B. Therefore, the final answer is: C"
    assert extract_answer(reply, item).value == "C"
    cut_off = "Option A looks right. Let me check frame 12 where"  # no statement: never a guess
    assert not extract_answer(cut_off, item).ok


def test_cot_mmvu_is_kept_under_its_own_name(svb_dataset) -> None:
    item = _item(svb_dataset, "10001/1/quantitative")
    prompt = build_prompt(item, cot="mmvu")
    assert prompt.startswith(
        "\nQuestion: The stock is diluted frame 110 at frame 15 from a 50 mM solution. "
        "What is the final concentration?\nA: 0.2 mM\nB: 0.4 mM\n"
    )
    assert prompt.endswith(
        "Conclude by stating the final answer using the following format: 'Therefore, the final answer is: "
        "$LETTER' (without quotes), where $LETTER is one of the options. Think step by\nstep before answering."
    )
    assert SciVideoBenchSuite({"cot": "mmvu"}).generation_defaults().max_tokens == 1024
    assert SciVideoBenchSuite().generation_defaults().max_tokens == 16  # the official task's max_new_tokens
    assert SciVideoBenchSuite({"cot": "false"}).generation_defaults().max_tokens == 16


def test_unknown_or_bad_settings_are_refused_naming_the_key() -> None:
    with pytest.raises(SettingsError, match="unknown scivideobench setting 'chain'"):
        SciVideoBenchSuite({"chain": "true"})
    with pytest.raises(SettingsError, match="setting post_prompt='claude'"):
        SciVideoBenchSuite({"post_prompt": "claude"})
    with pytest.raises(SettingsError, match=r"setting cot='mmmu'.*'mmvu'"):
        SciVideoBenchSuite({"cot": "mmmu"})
    with pytest.raises(SettingsError, match="not both"):
        SciVideoBenchSuite({"cot": "true", "post_prompt": "gpt4v"})
