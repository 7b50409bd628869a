"""Option-letter extraction: what counts as an answer, and - as important - what never does."""

from __future__ import annotations

import pytest

from expvid.schema import ExtractionStatus, Item
from expvid.scoring.extraction import extract_answer

# Options of `choice_item`: A agarose beads, B sepharose beads, C 60°C water bath, D Vitamin D.
FOUND = [
    # boxed answers, every dressing models use
    (r"\boxed{B}", "B", "boxed"),
    (r"The video shows sepharose. \boxed{\text{B}}", "B", "boxed"),
    (r"\boxed{\textbf{B}}", "B", "boxed"),
    (r"\boxed{(B)}", "B", "boxed"),
    (r"\boxed{[B]}", "B", "boxed"),
    (r"$\boxed{B}$", "B", "boxed"),
    (r"\boxed{B.}", "B", "boxed"),
    (r"\boxed{ B }", "B", "boxed"),
    (r"\boxed{b}", "B", "boxed"),
    (r"\boxed{B: sepharose beads}", "B", "boxed_letter_and_text"),
    (r"\boxed{B. sepharose beads}", "B", "boxed_letter_and_text"),
    (r"\boxed{(B) sepharose beads}", "B", "boxed_letter_and_text"),
    (r"\fbox{C}", "C", "boxed"),
    (r"\boxed {D}", "D", "boxed"),
    (r"\boxed{\text{(A)}}", "A", "boxed"),
    (r"**\boxed{B}**", "B", "boxed"),
    (r"\boxed{sepharose beads}", "B", "boxed_option_text"),
    (r"\boxed{Vitamin D}", "D", "boxed_option_text"),
    (r"\boxed{60°C water bath}", "C", "boxed_option_text"),
    (r"\boxed{The answer is C}", "C", "boxed_answer_phrase"),
    # the LAST box wins, including over boxes inside earlier reasoning text
    (r"First I thought \boxed{A}, but on reflection \boxed{C}", "C", "boxed"),
    (r"<think>it is \boxed{A}</think>\boxed{B}", "B", "boxed"),
    # an empty box (an echoed instruction) is skipped
    (r"Put the letter in \boxed{}. Answer: B", "B", "answer_phrase"),
    # explicit answer statements
    ("The answer is B.", "B", "answer_phrase"),
    ("The correct answer is (C).", "C", "answer_phrase"),
    ("Answer: D", "D", "answer_phrase"),
    ("answer: B", "B", "answer_phrase"),
    ("Final answer: **A**", "A", "answer_phrase"),
    ("**Answer:** B", "B", "answer_phrase"),
    ("The answer is A, because the beads are white.", "A", "answer_phrase"),
    ("Answer:\nC", "C", "answer_phrase"),
    ("The best answer is option B", "B", "answer_phrase"),
    ("I first thought the answer is A. Final answer: C", "C", "answer_phrase"),
    ("The answer is sepharose beads.", "B", "answer_phrase_option_text"),
    ("Option B is correct.", "B", "stated_correct"),
    ("The answer is C. Option A is correct only if the beads are dyed.", "C", "answer_phrase"),
    # lone letters
    ("B", "B", "whole_reply"),
    ("(B)", "B", "whole_reply"),
    ("B.", "B", "whole_reply"),
    ("B)", "B", "whole_reply"),
    ("  C \n", "C", "whole_reply"),
    ("Option D", "D", "whole_reply"),
    # exact option text
    ("sepharose beads", "B", "whole_reply_option_text"),
    ("Sepharose  BEADS.", "B", "whole_reply_option_text"),
    ("B. sepharose beads", "B", "whole_reply_letter_and_text"),
]

NOT_FOUND = [
    "The answer is 60°C",  # a letter inside a unit
    "Add 5 mL of buffer.",
    "A549 cells",  # a letter glued to digits
    "Answer: A549 cells",
    "Vitamin D is the best choice",  # a letter inside a name
    "The answer is Vitamin",
    "N/A",
    "A good choice is the beads.",  # an article
    "I think so.",
    "I",  # a real letter, but not among A-D
    "The answer is A and B",  # two answers is no answer
    "answer: a mixture of beads",
    "It is probably agarose or sepharose.",
    "The answer is D-glucose",
    "",
    "   ",
    r"\boxed{A or B}",
    r"\boxed{sepharose}",  # not an option's full text
    "C. elegans were used",
]


@pytest.mark.parametrize(("response", "letter", "rule"), FOUND)
def test_letter_found(choice_item: Item, response: str, letter: str, rule: str) -> None:
    extraction = extract_answer(response, choice_item)
    assert extraction.status is ExtractionStatus.OK, extraction.detail
    assert (extraction.value, extraction.rule) == (letter, rule)


@pytest.mark.parametrize("response", NOT_FOUND)
def test_no_letter_is_guessed(choice_item: Item, response: str) -> None:
    extraction = extract_answer(response, choice_item)
    assert extraction.status is ExtractionStatus.UNPARSEABLE
    assert extraction.value is None
    assert extraction.detail


@pytest.mark.parametrize("response", [r"\boxed{E}", "The answer is E.", "Answer: (F)", r"\boxed{J}"])
def test_letter_outside_the_options_is_reported_not_mapped(choice_item: Item, response: str) -> None:
    extraction = extract_answer(response, choice_item)
    assert extraction.status is ExtractionStatus.UNPARSEABLE
    assert "not one of the options A-D" in (extraction.detail or "")


def test_invalid_last_box_is_not_rescued_by_earlier_text(choice_item: Item) -> None:
    # The model committed to E in its final box; an earlier "Answer: B" does not overrule that.
    extraction = extract_answer("Answer: B\n\nOn reflection: \\boxed{E}", choice_item)
    assert extraction.status is ExtractionStatus.UNPARSEABLE


def test_letters_up_to_j_for_ten_options(ten_option_item: Item) -> None:
    assert extract_answer(r"\boxed{I}", ten_option_item).value == "I"
    assert extract_answer("The answer is J.", ten_option_item).value == "J"
    assert extract_answer("I", ten_option_item).value == "I"
    # options map letters to step numbers: "\boxed{9}" is option I's text
    assert extract_answer(r"\boxed{9}", ten_option_item).value == "I"


def test_letter_with_contradicting_option_text_is_unparseable(choice_item: Item) -> None:
    extraction = extract_answer(r"\boxed{A. sepharose beads}", choice_item)
    assert extraction.status is ExtractionStatus.UNPARSEABLE
    assert "option B" in (extraction.detail or "")


def test_truncated_box_is_ignored(choice_item: Item) -> None:
    assert extract_answer(r"Answer: C. To be sure: \boxed{\text{B", choice_item).value == "C"


def test_failed_request_is_failed_not_unparseable(choice_item: Item) -> None:
    extraction = extract_answer(None, choice_item)
    assert extraction.status is ExtractionStatus.FAILED
    assert extraction.value is None
