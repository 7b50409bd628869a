"""Step numbers and step lists (ExpVid step prediction and sequence generation)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from expvid.schema import ExtractionStatus, Item
from expvid.scoring.extraction import extract_answer, parse_step_list, step_numbers_in_question
from expvid.scoring.extraction.steps import candidate_steps


def test_step_list_without_leading_one_is_read_as_1_to_n(step_item: Item) -> None:
    # The release omits "1." before the first step; "37." inside step 3 must not extend the list.
    assert step_numbers_in_question(step_item.question) == [1, 2, 3, 4, 5, 6, 7]


def test_step_list_with_explicit_one() -> None:
    question = "Full Step List:\n1. Mix\n2. Heat\n3. Cool\n10. Irrelevant number in text"
    assert step_numbers_in_question(question) == [1, 2, 3]


def test_question_without_a_list_gives_none() -> None:
    assert step_numbers_in_question("Which step was not performed?") is None


def test_loader_given_step_numbers_take_precedence(make_item: Callable[..., Item]) -> None:
    item = make_item(
        id="step_prediction/9",
        task="step_prediction",
        question="no list here",
        answer=12,
        answer_type="step_number",
        meta={"video_id": "v9", "step_numbers": [12, 11, 13]},
    )
    assert candidate_steps(item) == [11, 12, 13]
    assert extract_answer(r"\boxed{12}", item).value == 12
    assert extract_answer(r"\boxed{14}", item).status is ExtractionStatus.UNPARSEABLE


@pytest.mark.parametrize(
    ("response", "number", "rule"),
    [
        (r"\boxed{4}", 4, "boxed"),
        (r"\boxed{Step 4}", 4, "boxed"),
        (r"\boxed{\text{Step }4}", 4, "boxed"),
        (r"\boxed{4. Rinse the foil three times with ethanol}", 4, "boxed"),
        (r"\boxed{5.}", 5, "boxed"),
        ("The answer is step 6.", 6, "answer_phrase"),
        ("Answer: 4", 4, "answer_phrase"),
        ("Answer: 4 because the foil is rinsed next", 4, "answer_phrase"),
        ("The next step is step 5", 5, "answer_phrase"),
        ("The next operation will be 7", 7, "answer_phrase"),
        ("Step 4", 4, "whole_reply"),
        ("4", 4, "whole_reply"),
        ("4.", 4, "whole_reply"),
        ("4. Rinse the foil three times with ethanol", 4, "whole_reply"),
        ("<think>maybe \\boxed{2}</think>\\boxed{3}", 3, "boxed"),
    ],
)
def test_step_number_found(step_item: Item, response: str, number: int, rule: str) -> None:
    extraction = extract_answer(response, step_item)
    assert extraction.status is ExtractionStatus.OK, extraction.detail
    assert (extraction.value, extraction.rule) == (number, rule)


@pytest.mark.parametrize(
    "response",
    [
        r"\boxed{12}",  # not in the 7-step list
        r"\boxed{0}",
        r"\boxed{4, 5}",
        r"\boxed{Rinse the foil}",
        "The answer is 5 mL",
        "The answer is 37 °C",
        "The answer is 10 min",
        "I think 3 or 4",
        "Heat at 37 °C",
        "The answer is 4.5",
    ],
)
def test_step_number_not_guessed(step_item: Item, response: str) -> None:
    extraction = extract_answer(response, step_item)
    assert extraction.status is ExtractionStatus.UNPARSEABLE
    assert extraction.value is None


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("13, 14, 15, 16", [13, 14, 15, 16]),
        ("[3; 5, 7]", [3, 5, 7]),
        ("Steps 3-5", [3, 4, 5]),
        ("3–5, 7", [3, 4, 5, 7]),
        ("steps 3 to 5 and 9", [3, 4, 5, 9]),
        ("2 → 4 → 6", [2, 4, 6]),
        ("2 -> 4 -> 6", [2, 4, 6]),
        ("3\n4\n5", [3, 4, 5]),
        ("Step 3, Step 4", [3, 4]),
        ("3, 3, 4, 3", [3, 4]),
        ("5, 3, 4", [5, 3, 4]),
        ("13. Pour the gel\n14. Let it set", [13, 14]),
        ("3，4；5", [3, 4, 5]),
        ("(3, 4, 5)", [3, 4, 5]),
    ],
)
def test_parse_step_list(text: str, steps: list[int]) -> None:
    assert parse_step_list(text) == steps


@pytest.mark.parametrize("text", ["agarose", "5-3", "1.5, 2", "3 and then some text", "", "1-500"])
def test_parse_step_list_rejects(text: str) -> None:
    assert parse_step_list(text) is None


@pytest.mark.parametrize(
    ("response", "steps", "rule"),
    [
        (r"\boxed{3, 4, 5}", [3, 4, 5], "boxed"),
        (r"The steps shown are 3 and 4. \boxed{[3,4]}", [3, 4], "boxed"),
        ("Answer: 3, 4, 5", [3, 4, 5], "answer_phrase"),
        ("3, 4, 5", [3, 4, 5], "whole_reply"),
        ("Steps 3-5", [3, 4, 5], "whole_reply"),
    ],
)
def test_step_sequence_found(sequence_item: Item, response: str, steps: list[int], rule: str) -> None:
    extraction = extract_answer(response, sequence_item)
    assert (extraction.status, extraction.value, extraction.rule) == (ExtractionStatus.OK, steps, rule)


@pytest.mark.parametrize("response", [r"\boxed{none}", "The video shows rinsing and drying.", r"\boxed{}"])
def test_step_sequence_unparseable(sequence_item: Item, response: str) -> None:
    assert extract_answer(response, sequence_item).status is ExtractionStatus.UNPARSEABLE
