"""Appendix D prompts per question type, the box prompt included, in SFE's construct_prompt layout."""

from __future__ import annotations

from expvid.models.types import TextPart
from expvid.schema import AnswerType
from expvid.suites.sfe import SFESuite, build_prompt


def _item(dataset, item_id):
    return next(item for item in dataset.items if item.id == item_id)


def test_multiple_choice(sfe_dataset) -> None:
    assert build_prompt(_item(sfe_dataset, "en/A001/0001")) == (
        "You are an expert in Astronomy and need to solve the following question.\n"
        "The question is a multiple-choice question. Answer with the option letter from the given choices.\n\n"
        "What is the morphology of the galaxy in the image?\n"
        "A: spiral\nB: elliptical\nC: merging\nD: edge-on"
    )


def test_exact_match_and_open(sfe_dataset) -> None:
    assert build_prompt(_item(sfe_dataset, "zh/C001/0003")) == (
        "You are an expert in Chemistry and need to solve the following question.\n"
        "The question is an exact match question. Answer the question using a single word or phrase.\n\n"
        "该分子含有多少个碳原子？"
    )
    assert build_prompt(_item(sfe_dataset, "en/M010/0009")).splitlines()[1] == (
        "The question is an open-ended question. Answer the question using a phrase."
    )


def test_box_prompt(sfe_dataset) -> None:
    lines = build_prompt(_item(sfe_dataset, "en/E011/0005")).splitlines()
    assert lines[0] == "You are an expert in Earth and need to solve the following question."
    assert lines[1].startswith(
        "The question is an open-ended question. Answer the question using a phrase. Each "
    )
    assert lines[1].endswith(
        'Here is an example output: "[x1_min, y1_min, x1_max, y1_max; x2_min, y2_min, x2_max, y2_max]" '
        "(no quotation marks)."
    )
    assert lines[2:] == ["", "Count the ships in the SAR image and give a bounding box for each."]


def test_box_prompt_of_the_official_code_is_the_exact_match_sentence(sfe_dataset) -> None:
    """SFE's own lmms-eval task (construct_prompt) sends box questions their type's sentence."""
    item = _item(sfe_dataset, "en/E011/0005")
    official = SFESuite({"box_prompt": "official"}).prompt_text(item).splitlines()
    assert (
        official[1]
        == "The question is an exact match question. Answer the question using a single word or phrase."
    )
    assert (
        official[0] == build_prompt(item).splitlines()[0]
        and official[2:] == build_prompt(item).splitlines()[2:]
    )
    assert SFESuite().prompt_text(item) == build_prompt(item)  # the paper's (appendix D) by default


def test_messages_put_every_image_before_the_text(sfe_dataset) -> None:
    from expvid.models.types import ImagePart

    item = _item(sfe_dataset, "en/L001/0007")
    images = [ImagePart(data=b"x"), ImagePart(data=b"y")]
    (message,) = SFESuite().messages(item, images)
    assert message.content[:2] == images and isinstance(message.content[2], TextPart)


def test_hints_give_option_letters_for_multiple_choice(sfe_dataset) -> None:
    suite = SFESuite()
    hints = suite.hints(_item(sfe_dataset, "zh/M001/0008"))
    assert hints.answer_type is AnswerType.CHOICE and hints.options == {
        "A": "简单立方", "B": "体心立方", "C": "面心立方", "D": "六方"
    }  # fmt: skip
    assert suite.hints(_item(sfe_dataset, "en/C004/0004")).answer_type is AnswerType.FREE_TEXT
