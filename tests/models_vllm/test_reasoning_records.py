"""Reasoning stays in the prediction record; answer extraction reads only the answer.

vLLM with a reasoning parser returns thoughts in `reasoning_content`; without one (or from a local
transformers model) they arrive inline as a `<think>` block. Both kinds of thought here contain a
tentative, wrong answer; the answer after them is B. The record must keep all of it, and the score
must come from B alone.
"""

from __future__ import annotations

import asyncio
import json

from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.scoring import extract_answer
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import get_suite

INLINE = "<think>The flask, or maybe \\boxed{C}? Let me look again.</think>\nThe video shows \\boxed{B}"
SEPARATE = "The pipette tip is visible in frame 2, so probably \\boxed{D}."


def test_thoughts_are_recorded_and_never_scored(sample_dir, tmp_path):
    out = tmp_path / "run"
    with LoopbackServer(Reply.ok(INLINE, reasoning=SEPARATE, reasoning_tokens=17)) as server:
        config = EvalConfig(
            data=sample_dir,
            model=f"openai:reasoner@{server.openai_base_url}",
            out=out,
            tasks=["tools"],
            limit=6,
            frames=FrameOptions(counts={"L1": 2}),
            cache_dir=None,
            n_bootstrap=10,
        )
        asyncio.run(evaluate(config, command=["test"], show_progress=False))

    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 6
    items = {item.id: item for item in get_suite("expvid").load(sample_dir).items}
    for prediction in predictions:
        assert prediction["response"] == INLINE  # the inline thought is kept verbatim...
        assert prediction["reasoning"] == SEPARATE  # ...and so is the separate reasoning channel
        assert prediction["usage"]["reasoning_tokens"] == 17
        extraction = extract_answer(prediction["response"], items[prediction["item_id"]])
        assert extraction.ok and extraction.value == "B"  # ...but only the answer after it counts

    gold_b = sum(items[p["item_id"]].answer == "B" for p in predictions)
    tools = json.loads((out / "scores.json").read_text())["tasks"]["tools"]
    assert tools["n_unparseable"] == 0
    assert tools["earned"] == gold_b  # scored as B: neither C (inline thought) nor D (reasoning)


def test_a_reply_cut_off_while_thinking_is_unparseable_not_mined(sample_dir, tmp_path):
    out = tmp_path / "run"
    with LoopbackServer(Reply.ok("<think>It could be \\boxed{A} or", finish_reason="length")) as server:
        config = EvalConfig(
            data=sample_dir,
            model=f"openai:reasoner@{server.openai_base_url}",
            out=out,
            tasks=["tools"],
            limit=3,
            frames=FrameOptions(counts={"L1": 2}),
            cache_dir=None,
            n_bootstrap=10,
        )
        asyncio.run(evaluate(config, command=["test"], show_progress=False))
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert all(
        p["response"].startswith("<think>") and p["meta"]["finish_reason"] == "length" for p in predictions
    )
    tools = json.loads((out / "scores.json").read_text())["tasks"]["tools"]
    assert tools["n_unparseable"] == 3 and tools["earned"] == 0
