"""The official direct prompt, its model-family post prompts, the CoT variant and --keep-times."""

from __future__ import annotations

import pytest

from expvid.suites.protocol import PromptOptions
from expvid.suites.scivideobench import SciVideoBenchSuite, build_prompt

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
    assert SciVideoBenchSuite().prompt_text(item, PromptOptions()) == expected


def test_keep_times_sends_the_question_as_written(svb_dataset) -> None:
    item = _item(svb_dataset, "10001/1/conceptual")
    prompt = build_prompt(item, {"keep_times": True})
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
        ("llava_vid", "\nThe best answer is:"),
    ],
)
def test_model_family_post_prompts(svb_dataset, family: str, ending: str) -> None:
    prompt = build_prompt(svb_dataset.items[0], {"post_prompt": family})
    assert prompt.endswith("J. To remove air bubbles (ice)" + ending)


def test_cot_variant_is_the_mmvu_template(svb_dataset) -> None:
    item = _item(svb_dataset, "10001/1/quantitative")
    prompt = build_prompt(item, {"cot": True})
    assert prompt.startswith(
        "\nQuestion: The stock is diluted frame 110 at frame 15 from a 50 mM solution. "
        "What is the final concentration?\nA: 0.2 mM\nB: 0.4 mM\n"
    )
    assert prompt.endswith(
        "Conclude by stating the final answer using the following format: 'Therefore, the final answer is: "
        "$LETTER' (without quotes), where $LETTER is one of the options. Think step by\nstep before answering."
    )
    suite = SciVideoBenchSuite()
    assert suite.generation_for(PromptOptions(variant={"cot": True})).max_tokens == 1024
    assert suite.generation_for(PromptOptions()).max_tokens == 16  # the official task's max_new_tokens


def test_unknown_variant_is_refused(svb_dataset) -> None:
    with pytest.raises(ValueError, match="unknown SciVideoBench prompt variant"):
        build_prompt(svb_dataset.items[0], {"chain": True})
    with pytest.raises(ValueError, match="post_prompt"):
        build_prompt(svb_dataset.items[0], {"post_prompt": "claude"})
