"""ProMQA's ternary judge: "[Judge] N" parsing, and the judge against a real loopback server."""

from __future__ import annotations

import asyncio

import pytest

from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.models.factory import create_backend
from expvid.suites.promqa.judge import (
    PerformedStep,
    TernaryJudge,
    TernaryParseError,
    official_split,
    parse_ternary,
)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("[Rationale] The prediction names the next step.\n[Judge] 2", 2),
        ("[Rationale] partly\n[Judge]: 1", 1),
        ("[Rationale] wrong step\n[Judge] **0**", 0),
        ("[Judge] (0)", 0),
        ("[Rationale] first I thought [Judge] 2 but no.\n[Judge] 1", 1),  # the last one counts
    ],
)
def test_parse(reply: str, value: int) -> None:
    assert parse_ternary(reply) == value


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("The answer matches.", 'no "\\[Judge\\] N"'),
        ("[Judge] (your judge, as a number, 0, 1, or 2)", "not followed by 0, 1 or 2"),
        ("[Judge] 3", "not followed"),
        ("[Judge] 1.5", "not followed"),
    ],
)
def test_unparseable_replies(reply: str, why: str) -> None:
    with pytest.raises(TernaryParseError, match=why):
        parse_ternary(reply)


def test_official_split_needs_exactly_one_marker() -> None:
    assert official_split("[Rationale] ok\n[Judge] 2\n") == "2"
    assert official_split("[Judge] 1 ... [Judge] 2") is None  # the official code drops such a reply


def _decide(judge: TernaryJudge) -> object:
    return asyncio.run(
        judge.decide(
            item_id="q1",
            task="next",
            activity="Spiced Cocoa",
            steps=[PerformedStep("Fill-Fill a mug with milk", (("Technique Error", "Spilled milk"),))],
            question="What should I do next?",
            gold_answers=["Microwave the milk."],
            prediction="Heat the milk in the microwave.",
        )
    )


def test_judge_request_is_text_only_and_official() -> None:
    with LoopbackServer(Reply.ok("[Rationale] Same step.\n[Judge] 2")) as server:
        judge = TernaryJudge(create_backend(f"openai:gpt-4o-2024-08-06@{server.openai_base_url}"))
        judgment = _decide(judge)
        (request,) = server.requests
    assert judgment.ok and judgment.score == 2.0  # type: ignore[attr-defined]
    assert request.n_images == 0
    assert request.body["temperature"] == 0.0 and request.body["max_tokens"] == 256
    (text,) = request.texts
    assert "    - [Technique Error] Spilled milk" in text and text.endswith("[Rationale]")


def test_unparseable_judge_and_failed_call_are_failures_not_zeros() -> None:
    with LoopbackServer(Reply.ok("It is basically right.")) as server:
        judgment = _decide(TernaryJudge(create_backend(f"openai:judge@{server.openai_base_url}")))
    assert not judgment.ok and judgment.score is None  # type: ignore[attr-defined]
    assert "unparseable judge" in judgment.error  # type: ignore[attr-defined]
    with LoopbackServer(Reply.error(400, "bad request")) as server:
        judgment = _decide(
            TernaryJudge(create_backend(f"openai:judge@{server.openai_base_url}", max_retries=0))
        )
    assert not judgment.ok and "judge request failed" in judgment.error  # type: ignore[attr-defined]
