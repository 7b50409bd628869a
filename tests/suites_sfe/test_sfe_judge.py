"""SFE's appendix E 0-10 judge: strict reading of the score, failures recorded, official reading kept."""

from __future__ import annotations

import asyncio

import pytest

from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.models.factory import create_backend
from expvid.suites.sfe.judge import (
    GradedJudge,
    GradedParseError,
    official_score_parse,
    parse_zero_to_ten,
)
from expvid.suites.sfe.offline_judge import OfflineGradedJudge


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("7", 7),
        ("**8**", 8),
        ("10", 10),
        ("Score: 9/10", 9),
        ("Reasoning: close.\n4", 4),
        ("<think>hmm 2</think>6", 6),
    ],
)
def test_scores_read(reply: str, value: int) -> None:
    assert parse_zero_to_ten(reply) == value


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("11", "outside 0-10"),
        ("On a 0-10 scale I give it four.", "no 0-10 score"),
        ("<think>7", "only"),
    ],
)
def test_not_a_score_is_a_failure(reply: str, why: str) -> None:
    with pytest.raises(GradedParseError, match=why):
        parse_zero_to_ten(reply)


def test_the_official_reading_for_comparison() -> None:
    assert official_score_parse("On a 0-10 scale: 4") == 0  # the first digits anywhere
    assert official_score_parse("I cannot judge this.") == 0  # no digits: silently 0
    assert official_score_parse(None) == 0
    assert official_score_parse("8") == 8


def test_judge_request() -> None:
    with LoopbackServer(Reply.ok("8")) as server:
        judge = GradedJudge(create_backend(f"openai:gpt-4o-2024-11-20@{server.openai_base_url}"))
        judgment = asyncio.run(
            judge.decide(
                item_id="en/C001/1", task="exact_match", question="How many?", answer="6", prediction="six"
            )
        )
        (request,) = server.requests
    assert judgment.ok and judgment.score == 8.0
    assert request.roles == ["system", "user"]
    assert (
        request.texts[0]
        == "You are a helpful and precise assistant for checking the correctness of the answer."
    )
    user = request.texts[1]
    assert user.startswith(
        "You are a strict evaluator assessing answer correctness. You must score the model's"
    )
    assert (
        "Question:\n```\nHow many?\n```\nGround Truth Answer:\n```\n6\n```\nModel Prediction:\n```\nsix\n```"
        in user
    )
    assert user.endswith("# Strict Output format example\n4") and request.body["temperature"] == 0.0


def test_a_judge_that_does_not_score_is_a_failure() -> None:
    with LoopbackServer(Reply.ok("The prediction is mostly right.")) as server:
        judge = GradedJudge(create_backend(f"openai:judge@{server.openai_base_url}"))
        judgment = asyncio.run(
            judge.decide(item_id="x", task="open_ended", question="q", answer="a", prediction="p")
        )
    assert not judgment.ok and judgment.score is None and "unparseable judge" in (judgment.error or "")


def test_offline_judge_rules() -> None:
    judge = OfflineGradedJudge()
    options = {"A": "spiral", "B": "elliptical"}
    letter = asyncio.run(
        judge.decide(item_id="x", task="mcq", answer="A", prediction="\\boxed{A}", options=options)
    )
    wrong = asyncio.run(judge.decide(item_id="x", task="mcq", answer="A", prediction="B", options=options))
    number = asyncio.run(
        judge.decide(item_id="x", task="exact_match", answer="-35", prediction="about -35.2 km/s")
    )
    other = asyncio.run(judge.decide(item_id="x", task="exact_match", answer="6", prediction="seven"))
    assert (letter.score, wrong.score, number.score, other.score) == (10.0, 0.0, 10.0, 0.0)
    assert judge.manifest_settings().offline is True
