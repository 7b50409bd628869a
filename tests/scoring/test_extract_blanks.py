"""Fill-in-the-blank answers, free text and boxes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from expvid.schema import AnswerType, Box, ExtractionStatus, Item
from expvid.scoring.extraction import extract_answer, split_blanks


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("a, b, c", ["a", "b", "c"]),
        ("a; b; c", ["a", "b", "c"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        ("a，b；c、d", ["a", "b", "c", "d"]),
        ("1,000 rpm, 37 °C", ["1,000 rpm", "37 °C"]),
        ("blue LED, 85%, and 24 h", ["blue LED", "85%", "24 h"]),
        ("(1) agarose (2) 37 °C", ["agarose", "37 °C"]),
        ("1. agarose; 2. ethanol; 3. 5 min", ["agarose", "ethanol", "5 min"]),
        ("Blank 1: agarose, Blank 2: ethanol", ["agarose", "ethanol"]),
        (r"\text{agarose}, 37^{\circ}\text{C}, 5\,\mu\text{L}", ["agarose", "37°C", "5 µL"]),
        ("**agarose**, *ethanol*", ["agarose", "ethanol"]),
        ('"agarose", "ethanol".', ["agarose", "ethanol"]),
        ("agarose, , ethanol", ["agarose", "", "ethanol"]),
        ("agarose, ethanol,", ["agarose", "ethanol"]),
        ("[(DPEPhos)(bcp)Cu]PF₆, blue LED", ["[(DPEPhos)(bcp)Cu]PF₆", "blue LED"]),
    ],
)
def test_split_blanks(text: str, parts: list[str]) -> None:
    assert split_blanks(text) == parts


def test_boxed_blanks(blank_item: Item) -> None:
    reply = r"The catalyst is copper based. \boxed{[(DPEPhos)(bcp)Cu]PF6, blue LED, 85\%, 24 h}"
    extraction = extract_answer(reply, blank_item)
    assert extraction.status is ExtractionStatus.OK
    assert extraction.value == ["[(DPEPhos)(bcp)Cu]PF6", "blue LED", "85%", "24 h"]
    assert extraction.detail is None


def test_one_box_per_blank(blank_item: Item) -> None:
    reply = r"\boxed{copper complex}, \boxed{blue LED}, \boxed{85%}, \boxed{24 h}"
    extraction = extract_answer(reply, blank_item)
    assert (extraction.rule, extraction.value) == (
        "boxed_each",
        ["copper complex", "blue LED", "85%", "24 h"],
    )


def test_count_mismatch_is_kept_and_recorded(blank_item: Item) -> None:
    extraction = extract_answer(r"\boxed{copper complex, blue LED}", blank_item)
    assert extraction.status is ExtractionStatus.OK
    assert extraction.value == ["copper complex", "blue LED"]
    assert extraction.detail == "2 answer(s) for 4 blank(s)"


def test_answer_phrase_and_one_line_reply(blank_item: Item) -> None:
    assert extract_answer("Answer: a, b, c, d", blank_item).value == ["a", "b", "c", "d"]
    assert extract_answer("a, b, c, d", blank_item).rule == "whole_reply"


@pytest.mark.parametrize(
    "reply",
    [
        "The video shows a copper catalyst being used under light.\nIt worked well.",
        "I cannot tell from the video.",  # one line, but not four answers
        r"\boxed{}",
        "<think>the answers are a, b, c, d</think>",
    ],
)
def test_blanks_unparseable(blank_item: Item, reply: str) -> None:
    assert extract_answer(reply, blank_item).status is ExtractionStatus.UNPARSEABLE


def test_free_text_is_reply_without_reasoning(make_item: Callable[..., Item]) -> None:
    item = make_item(
        id="promqa/1",
        suite="promqa",
        task="next",
        question="What should I do next?",
        answer=["Add the eggs."],
        answer_type=AnswerType.FREE_TEXT,
    )
    extraction = extract_answer("<think>eggs?</think>\n  You should add the eggs.  ", item)
    assert (extraction.status, extraction.value) == (ExtractionStatus.OK, "You should add the eggs.")


def test_boxes(make_item: Callable[..., Item]) -> None:
    item = make_item(
        id="E011/1",
        suite="sfe",
        task="E011",
        question="Locate the cells.",
        answer=[Box(x1=0.1, y1=0.1, x2=0.3, y2=0.3)],
        answer_type=AnswerType.BOXES,
    )
    extraction = extract_answer(r"\boxed{[0.1, 0.1, 0.3, 0.3; 0.5,0.5,0.6,0.7]}", item)
    assert extraction.value == [Box(x1=0.1, y1=0.1, x2=0.3, y2=0.3), Box(x1=0.5, y1=0.5, x2=0.6, y2=0.7)]
    pixels = extract_answer("[10, 20, 300, 400]", item)
    assert pixels.status is ExtractionStatus.UNPARSEABLE
    assert "not normalised" in (pixels.detail or "")
    assert extract_answer("[0.5, 0.5, 0.2, 0.2]", item).status is ExtractionStatus.UNPARSEABLE
