"""One `evaluate()` against three servers, one of which starts failing mid-run."""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.suites.protocol import FrameOptions


class Breaking:
    """Answers like a model until `healthy_for` answers were given, then drops every connection."""

    def __init__(self, healthy_for: int | None) -> None:
        self.healthy_for = healthy_for
        self.answered = 0
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self.lock:
            if self.healthy_for is not None and self.answered >= self.healthy_for:
                return Reply.dropped()
            self.answered += 1
        return Reply.ok("The video shows it: \\boxed{A}", delay_s=0.02)


def test_every_item_is_answered_once_when_a_node_fails_mid_run(sample_dir, tmp_path):
    responders = [Breaking(None), Breaking(None), Breaking(2)]
    servers = [LoopbackServer(responder).start() for responder in responders]
    try:
        out = tmp_path / "run"
        config = EvalConfig(
            data=sample_dir,
            model="openai:loopback@" + ",".join(s.openai_base_url for s in servers),
            out=out,
            tasks=["tools", "operation", "step_prediction"],
            limit=6,
            frames=FrameOptions(counts={"L1": 2, "L2": 2}),
            concurrency=6,
            cache_dir=None,
            n_bootstrap=10,
            backend_options={
                "backoff_base_s": 0.01,
                "endpoint_failures_to_cooldown": 2,
                "endpoint_cooldown_s": 60,
            },
        )
        result = asyncio.run(evaluate(config, command=["test"], show_progress=False))
    finally:
        for server in servers:
            server.stop()

    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    items = Counter(p["item_id"] for p in predictions)
    assert result.failed == 0 and len(items) == result.generated == len(predictions)
    assert set(items.values()) == {1}  # no item recorded twice
    assert all(p["error"] is None and p["response"].endswith("\\boxed{A}") for p in predictions)
    served = [len(server.requests) for server in servers]
    assert served[2] <= 2 + 2 + 2  # its 2 answers, the 2 failures that benched it, 2 in flight
    assert min(served[:2]) > served[2]
    endpoints = json.loads((out / "manifest.json").read_text())["config"]["backend"]["endpoints"]
    assert [e["url"] for e in endpoints] == [s.openai_base_url for s in servers]
