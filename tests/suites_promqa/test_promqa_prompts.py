"""The official answer prompt and the text-only ternary judge prompt (performed steps WITH error tags)."""

from __future__ import annotations

from expvid.suites.promqa import build_prompt
from expvid.suites.promqa.judge import format_steps, load_template, render_prompt
from expvid.suites.promqa.suite import performed_steps


def test_answer_prompt(promqa_dataset) -> None:
    item = next(i for i in promqa_dataset.items if i.id == "2_20_1_next")
    prompt = build_prompt(item)
    assert prompt.startswith(
        "[Instruction]\nThis is a multimodal question answering task.\n\nA user is cooking Cucumber Bowl.\n"
        "The images are the sampled frames from the user recording.\nHere is the recipe in the DOT format:\n"
        "[Recipe]\ndigraph G {\nSTART;\n"
    )
    assert prompt.endswith(
        "}\n\nAnswer the following question by the user in one sentence, based on the given information.\n"
        "[Question]\nWhat is the next step now?\n[Answer]"
    )


def test_judge_prompt_shows_performed_steps_with_their_error_tags(real_dataset) -> None:
    item = next(i for i in real_dataset.items if i.id == "17_40_5_next")
    steps = performed_steps(item)
    assert len(steps) == 6  # five previous steps and the current one
    listing = format_steps(steps)
    assert listing.startswith(
        "- Add-Add 1 teaspoon of cumin powder to the bowl\n"
        "    - [Technique Error] spill some cumin powder\n"
        "    - [Order Error] Step performed before whisking curd in the bowl\n"
    )
    assert listing.endswith(
        "- chop or grate-chop or grate only 1/2 of zucchini instead of one medium cucumber\n"
        "    - [Measurement Error] use zucchini instead of cucumber and chop or grate only half zucchini instead "
        "of full\n    - [Preparation Error] Use zucchini instead of cucumber"
    )
    prompt = render_prompt(
        load_template(),
        activity="Cucumber Raita",
        steps=steps,
        question=item.question,
        gold_answers=[str(a) for a in item.answer],  # type: ignore[union-attr]
        prediction="Add the grated cucumber to the curd.",
    )
    assert prompt.startswith("## Instruction ##\nThis is an evaluation task.\n")
    assert (
        "\n\nGive your ternary judge 0, 1, or 2:\n* 0 means the predicted answer is wrong (unmatch)\n"
        in prompt
    )
    assert "The question is being asked by a user who is cooking Cucumber Raita.\n" in prompt
    assert "Here are the steps being performed already:\n" + listing + "\n\n## Task ##" in prompt
    assert f"[Question]\n- {item.question}\n[Gold Answer(s)]\n- " in prompt
    assert prompt.endswith(
        "[Predicted Answer]\n- Add the grated cucumber to the curd.\n\n## Feedback ##\n[Rationale]"
    )
    assert "digraph" not in prompt  # the ternary-step judge never sees the recipe, nor any frame
