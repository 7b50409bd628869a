"""SciVideoBench's official extraction reproduced as a named mode, beside strict extraction."""

from __future__ import annotations

import pytest

from expvid.schema import ExtractionStatus
from expvid.scoring import extract_answer
from expvid.suites.scivideobench.official_extraction import (
    extract_official,
    fallback_letter,
    is_guess,
    official_letter,
)


@pytest.mark.parametrize(
    ("reply", "letter"),
    [
        ("I think the answer is B", "I"),  # the first capital A-L anywhere wins
        ("The answer is B", "B"),
        ("The correct answer is (C).", "C"),
        ("Answer: D", "D"),
        ("B. To speed up the reaction", "B"),
        ("Keep it cold: K is wrong, so A", "K"),  # K and L count although only A-J exist
        # "Answer:" is deleted before the longer "### Final Answer:\n$$\boxed" prefix can match,
        # so the F of "Final" is read: the boxed prefix in the official list never fires
        ("### Final Answer:\n$$\\boxed{E}$$", "F"),
        ("the final answer is f", ""),  # lower case never counts
        ("", ""),
    ],
)
def test_first_capital_after_the_prefixes(reply: str, letter: str) -> None:
    assert official_letter(reply) == letter


def test_long_reply_without_an_option_letter_has_no_answer() -> None:
    reply = (
        "this reply is long and never names an option letter in capitals so nothing at all can be read " + "L"
    )
    assert len(reply.split()) > 16
    assert official_letter(reply) == ""  # L alone does not pass the A-J check
    assert official_letter("short reply ending in L") == "L"


def test_official_mode_vs_strict_on_the_same_reply(svb_dataset) -> None:
    item = svb_dataset.items[0]
    reply = "I think the answer is B"
    official = extract_official(reply, item)
    strict = extract_answer(reply, item)
    assert (official.value, official.rule) == ("I", "official_first_capital")
    assert (strict.value, strict.rule) == ("B", "answer_phrase")


def test_no_letter_gives_a_seeded_guess_marked_as_one(svb_dataset) -> None:
    item, other = svb_dataset.items[0], svb_dataset.items[1]
    guess = extract_official("no idea", item, seed=3)
    assert guess.status is ExtractionStatus.OK and is_guess(guess)
    assert guess.value in "ABCDEFGHIJ" and guess.value == fallback_letter(item.id, 3)
    assert extract_official("no idea", item, seed=3).value == guess.value  # re-scoring gives the same guess
    letters = {fallback_letter(f"{other.id}-{n}", 0) for n in range(200)}
    assert letters == set("ABCDEFGHIJ")  # all ten letters are drawn, never K or L


def test_a_failed_request_stays_a_failure(svb_dataset) -> None:
    failed = extract_official(None, svb_dataset.items[0])
    assert failed.status is ExtractionStatus.FAILED and failed.value is None
