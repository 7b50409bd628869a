"""The LLM blank judge against a scripted in-test backend (the edge of the machine).

The backend implements `ModelBackend` exactly as the real ones do; it records every request so
the tests can check what the judge actually sent (prompt, temperature, retries).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any

import pytest

from expvid.models.types import BackendError, GenerateRequest, GenerateResponse, ModelBackend, TextPart
from expvid.schema import Item
from expvid.scoring.judges import BlankJudge, LLMBlankJudge, load_prompt

Reply = str | None | BackendError


class ScriptedBackend:
    """Answers each request with the next scripted reply (or a function of the request)."""

    name = "scripted-judge"

    def __init__(self, replies: list[Reply] | Callable[[GenerateRequest], Reply]) -> None:
        self.replies = replies
        self.requests: list[GenerateRequest] = []

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.requests.append(request)
        reply = self.replies(request) if callable(self.replies) else self.replies[len(self.requests) - 1]
        if isinstance(reply, BackendError):
            raise reply
        return GenerateResponse(text=reply, model="phi-3-mini")

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": "phi-3-mini", "base_url": "http://127.0.0.1:8000/v1"}

    async def aclose(self) -> None:
        return None


def _prompt(request: GenerateRequest, index: int = 0) -> str:
    part = request.messages[index].content[0]
    assert isinstance(part, TextPart)
    return part.text


def test_protocols_are_satisfied() -> None:
    backend = ScriptedBackend([])
    assert isinstance(backend, ModelBackend)
    assert isinstance(LLMBlankJudge(backend), BlankJudge)


def test_one_call_decides_every_blank(blank_item: Item) -> None:
    backend = ScriptedBackend(['{"verdicts": [true, false, true, true]}'])
    judge = LLMBlankJudge(backend)
    judgment = asyncio.run(judge.judge(blank_item, ["copper complex", "UV", "85 %", "one day"]))
    assert judgment.verdicts == [True, False, True, True]
    assert judgment.error is None and judgment.judge == "llm:scripted-judge"
    assert len(backend.requests) == 1
    request = backend.requests[0]
    assert request.temperature == 0.0 and request.seed == 0
    assert request.metadata["item_id"] == blank_item.id
    text = _prompt(request)
    assert "direct C2 arylation" in text  # the question
    assert "Blank 2\n  reference answer: visible light\n  candidate answer: UV" in text
    assert "(4 in total)" in text
    assert "$" not in text.replace("$question", "")  # every placeholder filled


def test_missing_and_empty_blanks_are_wrong_without_asking(blank_item: Item) -> None:
    backend = ScriptedBackend(['{"verdicts": [true, true]}'])
    judgment = asyncio.run(LLMBlankJudge(backend).judge(blank_item, ["copper complex", "", "85%"]))
    # blank 2 empty, blank 4 missing: only blanks 1 and 3 are sent, numbered as in the question
    text = _prompt(backend.requests[0])
    assert "Blank 1\n" in text and "Blank 3\n" in text and "Blank 2\n" not in text and "Blank 4" not in text
    assert judgment.verdicts == [True, False, True, False]


def test_extra_answers_are_ignored(blank_item: Item) -> None:
    backend = ScriptedBackend(["[true, true, true, true]"])
    judgment = asyncio.run(LLMBlankJudge(backend).judge(blank_item, ["a", "b", "c", "d", "e", "f"]))
    assert judgment.verdicts == [True] * 4
    assert "candidate answer: e" not in _prompt(backend.requests[0])


def test_no_answers_no_call(blank_item: Item) -> None:
    backend = ScriptedBackend([])
    judgment = asyncio.run(LLMBlankJudge(backend).judge(blank_item, []))
    assert judgment.verdicts == [False] * 4 and backend.requests == []


def test_nonsense_is_retried_with_a_different_request(blank_item: Item) -> None:
    backend = ScriptedBackend(
        [
            "All four look right to me.",
            '{"verdicts": [true, true]}',
            'Sure!\n```json\n{"verdicts": [true, false, false, true]}\n```\nHope this helps.',
        ]
    )
    judgment = asyncio.run(LLMBlankJudge(backend).judge(blank_item, ["a", "b", "c", "d"]))
    assert judgment.verdicts == [True, False, False, True]
    assert len(backend.requests) == 3
    second, third = backend.requests[1], backend.requests[2]
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert "no JSON object" in _prompt(second, 2)
    assert "2 verdict(s) where 4 were asked for" in _prompt(third, 4)
    assert [r.metadata["attempt"] for r in backend.requests] == [1, 2, 3]


def test_persistent_nonsense_gives_an_error_not_zeros(blank_item: Item) -> None:
    backend = ScriptedBackend(lambda request: "maybe?")
    judgment = asyncio.run(LLMBlankJudge(backend, max_attempts=2).judge(blank_item, ["a", "b", "c", "d"]))
    assert judgment.verdicts is None
    assert judgment.error is not None and "after 2 attempt(s)" in judgment.error
    assert judgment.raw == "maybe?"
    assert len(backend.requests) == 2


def test_backend_failure_gives_an_error(blank_item: Item) -> None:
    backend = ScriptedBackend([BackendError("HTTP 503 after 5 retries", status=503)])
    judgment = asyncio.run(LLMBlankJudge(backend).judge(blank_item, ["a", "b", "c", "d"]))
    assert judgment.verdicts is None
    assert "HTTP 503" in (judgment.error or "")
    assert len(backend.requests) == 1


def test_empty_reply_is_nonsense(blank_item: Item) -> None:
    backend = ScriptedBackend([None, '{"verdicts": [false, false, false, false]}'])
    judgment = asyncio.run(LLMBlankJudge(backend).judge(blank_item, ["a", "b", "c", "d"]))
    assert judgment.verdicts == [False] * 4


def test_same_inputs_same_requests(blank_item: Item) -> None:
    def answer(request: GenerateRequest) -> str:
        return '{"verdicts": [true, true, true, true]}'

    first, second = ScriptedBackend(answer), ScriptedBackend(answer)
    asyncio.run(LLMBlankJudge(first).judge(blank_item, ["a", "b", "c", "d"]))
    asyncio.run(LLMBlankJudge(second).judge(blank_item, ["a", "b", "c", "d"]))
    assert first.requests[0].model_dump() == second.requests[0].model_dump()


def test_describe_carries_the_exact_prompt_and_its_hash() -> None:
    judge = LLMBlankJudge(ScriptedBackend([]))
    described = judge.describe()
    prompt = load_prompt()
    assert described["prompt"] == prompt
    assert described["prompt_sha256"] == hashlib.sha256(prompt.encode()).hexdigest()
    assert described["offline"] is False and described["temperature"] == 0.0
    assert described["backend"]["model"] == "phi-3-mini"
    settings = judge.manifest_settings()
    assert (settings.model, settings.endpoint, settings.prompt) == (
        "phi-3-mini",
        "http://127.0.0.1:8000/v1",
        prompt,
    )


def test_bad_template_fails_at_construction() -> None:
    with pytest.raises(KeyError):
        LLMBlankJudge(ScriptedBackend([]), prompt="Judge $question against $missing_placeholder")
    with pytest.raises(ValueError, match="max_attempts"):
        LLMBlankJudge(ScriptedBackend([]), max_attempts=0)


def test_concurrent_judging(make_item: Callable[..., Item]) -> None:
    items = [
        make_item(
            id=f"scientific_discovery/{i}",
            task="scientific_discovery",
            level=3,
            question="The ___ and the ___.",
            answer=[f"gold{i}", "x"],
            answer_type="blanks",
        )
        for i in range(20)
    ]

    def answer(request: GenerateRequest) -> str:
        # verdict 1 true only for even items: checks every judgment lands on its own item
        number = int(str(request.metadata["item_id"]).split("/")[1])
        return f'{{"verdicts": [{"true" if number % 2 == 0 else "false"}, false]}}'

    judge = LLMBlankJudge(ScriptedBackend(answer))

    async def run_all() -> list[Any]:
        return await asyncio.gather(*(judge.judge(item, ["g", "x"]) for item in items))

    judgments = asyncio.run(run_all())
    assert [j.item_id for j in judgments] == [item.id for item in items]
    assert [j.verdicts for j in judgments] == [[i % 2 == 0, False] for i in range(20)]
