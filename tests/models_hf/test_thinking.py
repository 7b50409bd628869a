"""The thinking switch reaches the chat template; a thinking budget closes the thought on time.

The tiny Qwen template carries a Qwen3-style switch: thinking off pre-fills an empty
"<think></think>", thinking on opens "<think>" for the model to continue.
"""

from __future__ import annotations

import asyncio

import pytest

from expvid.models import BackendError, GenerateRequest, Message, TextPart, ThinkingConfig, create_backend

torch = pytest.importorskip("torch", reason="the thinking budget runs on torch tensors")

QUESTIONS = ["which tool is used ?", "what happens next ?", "is this a pipette ?", "what is in the tube ?"]


def ask(backend, question: str, thinking: ThinkingConfig | None, max_tokens: int = 8):
    request = GenerateRequest(
        messages=[Message(role="user", content=[TextPart(text=question)])],
        temperature=0.0,
        max_tokens=max_tokens,
        thinking=thinking,
    )

    async def go():
        try:
            return await backend.generate(request)
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.fixture(scope="module")
def qwen(tiny_checkpoints):
    return create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}")


def test_the_switch_reaches_the_template(qwen):
    plain = ask(qwen, QUESTIONS[0], None)
    on = ask(qwen, QUESTIONS[0], ThinkingConfig(enabled=True))
    off = ask(qwen, QUESTIONS[0], ThinkingConfig(enabled=False))
    assert on.usage.prompt_tokens == plain.usage.prompt_tokens + 1  # "<think>" opened for the model
    assert off.usage.prompt_tokens == plain.usage.prompt_tokens + 2  # "<think></think>" closed for it
    zero_budget = ask(qwen, QUESTIONS[0], ThinkingConfig(enabled=True, budget_tokens=0))
    assert zero_budget.usage.prompt_tokens == off.usage.prompt_tokens  # a zero budget is thinking off


def test_a_budget_forces_the_thought_closed_after_that_many_tokens(qwen):
    # Words of the decoded text stand for tokens here (a word-level vocabulary); special tokens are
    # dropped when decoding, so a word index is at most the token index.
    for question in QUESTIONS:
        free = ask(qwen, question, ThinkingConfig(enabled=True)).text.split()
        closes_at = free.index("</think>") if "</think>" in free else len(free)
        if closes_at >= 3:
            break
    else:
        pytest.fail(f"every question closed its thought within 2 tokens: {free}")
    budget = closes_at - 1
    forced = ask(qwen, question, ThinkingConfig(enabled=True, budget_tokens=budget)).text.split()
    assert "</think>" in forced
    closed = forced.index("</think>")
    assert closed <= budget  # closed once the budget was spent...
    assert forced[:closed] == free[:closed]  # ...and nothing changed before that
    assert free[closed] != "</think>"  # left alone, the model would have kept thinking
    assert qwen.describe()["thinking_budget_supported"] is True


def test_a_budget_on_a_tokenizer_without_think_tokens_is_refused(tiny_checkpoints):
    internvl = create_backend(f"hf:{tiny_checkpoints['internvl']}")
    assert internvl.describe()["thinking_budget_supported"] is False
    with pytest.raises(BackendError, match="budget cannot be enforced"):
        ask(internvl, QUESTIONS[0], ThinkingConfig(enabled=True, budget_tokens=64))
    # The switch alone is fine: templates without it simply ignore it.
    assert ask(internvl, QUESTIONS[0], ThinkingConfig(enabled=True)).usage.completion_tokens >= 1


OPEN, CLOSE, PAD = 5, 6, 0


def _force(budget: int, prompt: list[list[int]], generated: list[list[int]]) -> list[bool]:
    """Which rows the processor forces to CLOSE at this step."""
    from expvid.models.hf.thinking import ThinkingBudget

    processor = ThinkingBudget(budget=budget, open_id=OPEN, close_id=CLOSE, prompt_length=len(prompt[0]))
    ids = torch.tensor([p + g for p, g in zip(prompt, generated, strict=True)])
    scores = processor(ids, torch.zeros(len(prompt), 10))
    return [bool(row.argmax() == CLOSE and torch.isinf(row).sum() == 9) for row in scores]


def test_budget_counts_per_row_from_where_the_thought_opened():
    prompt = [[PAD, 1, 2], [1, 2, 3], [1, 2, OPEN], [1, OPEN, CLOSE]]
    generated = [
        [OPEN, 7, 8],  # opened while generating, 2 thinking tokens so far
        [7, 8, 9],  # never opened: an ordinary answer is left alone
        [7, 8, 9],  # opened by the prompt, 3 tokens spent
        [7, 8, 9],  # the prompt closed its thought already
    ]
    assert _force(2, prompt, generated) == [True, False, True, False]
    assert _force(3, prompt, generated) == [False, False, True, False]
    assert _force(2, [[1, OPEN]], [[7, CLOSE, 8]]) == [False]  # closed by the model itself: done
