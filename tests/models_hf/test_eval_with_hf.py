"""`evaluate()` with `hf:PATH`: the sample benchmark's items, the harness's frames, a real local model.

The model is random, so its answers are noise: what is checked is that every item gets a prediction
made from exactly the frames the runner sampled and logged, and that noise is scored as what it is
(unparseable or wrong), never as a failure or a guess.
"""

from __future__ import annotations

import asyncio
import json

from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.suites.protocol import FrameOptions


def test_sample_items_run_end_to_end_through_a_local_model(sample_dir, tiny_checkpoints, tmp_path):
    out = tmp_path / "run"
    config = EvalConfig(
        data=sample_dir,
        model=f"hf:{tiny_checkpoints['qwen2_5_vl']}",
        out=out,
        tasks=["tools", "step_prediction"],
        limit=2,
        frames=FrameOptions(counts={"L1": 4, "L2": 6}),
        max_tokens=6,
        backend_options={"batch_size": 4},
        cache_dir=None,
        n_bootstrap=20,
    )
    result = asyncio.run(evaluate(config, command=["test"], show_progress=False))
    assert result.generated == 4 and result.failed == 0

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["backend"]["kind"] == "hf"
    assert manifest["config"]["backend"]["family"] == "qwen2.5-vl"
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 4 and len({p["item_id"] for p in predictions}) == 4
    for prediction in predictions:
        assert prediction["error"] is None
        assert isinstance(prediction["response"], str)
        assert (
            prediction["n_images"] == len(prediction["frames"]) == (4 if prediction["task"] == "tools" else 6)
        )
        assert prediction["usage"]["completion_tokens"] >= 1
    scores = json.loads((out / "scores.json").read_text())
    assert set(scores["tasks"]) == {"tools", "step_prediction"}
    assert all(task["n"] == 2 for task in scores["tasks"].values())


def test_sampled_answers_do_not_depend_on_concurrency(sample_dir, tiny_checkpoints, tmp_path):
    """One item at a time or all batched together: every item gets the same sampled answer."""

    def run(out, concurrency: int, batch_size: int) -> dict[str, str]:
        config = EvalConfig(
            data=sample_dir,
            model=f"hf:{tiny_checkpoints['qwen2_5_vl']}",
            out=out,
            tasks=["tools"],
            limit=4,
            frames=FrameOptions(counts={"L1": 2}),
            temperature=1.0,
            max_tokens=8,
            concurrency=concurrency,
            backend_options={"batch_size": batch_size, "batch_wait_s": 0.2},
            cache_dir=None,
            n_bootstrap=10,
        )
        asyncio.run(evaluate(config, command=["test"], show_progress=False))
        lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
        assert all(p["sent"]["input_mode"] == "images" and p["sent"]["do_sample"] for p in lines)
        largest = json.loads((out / "manifest.json").read_text())["config"]["backend"]["largest_batch"]
        return {p["item_id"]: p["response"] for p in lines}, largest

    alone, one = run(tmp_path / "one-by-one", concurrency=1, batch_size=1)
    batched, several = run(tmp_path / "batched", concurrency=8, batch_size=4)
    assert (one, several > 1) == (1, True)  # the second run really shared forward passes
    assert batched == alone
    assert len(set(alone.values())) > 1  # per-item seeds: the items did not all draw the same tokens
