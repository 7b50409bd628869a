"""Failures are recorded as failures: a request that fails for good, an unreadable video, a judge that
replies nonsense. None of them is scored as an answer, and a re-run retries them."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.run.rescore import JudgeChoice, rescore_run
from expvid.suites.protocol import FrameOptions


def _config(data: Path, server: LoopbackServer, out: Path, cache: Path, **extra: object) -> EvalConfig:
    return EvalConfig(
        data=data,
        model=f"openai:loopback@{server.openai_base_url}",
        out=out,
        cache_dir=cache,
        n_bootstrap=20,
        backend_options={"max_retries": 1, "backoff_base_s": 0.01},
        **extra,  # type: ignore[arg-type]
    )


def test_failed_requests_are_failures_and_are_retried_on_resume(sample_dir, tmp_path, frame_cache_dir):
    lock = threading.Lock()
    calls = {"n": 0}

    def flaky(request: RecordedRequest) -> Reply:
        with lock:
            calls["n"] += 1
            n = calls["n"]
        # Every third request fails with a non-retryable 400 on the first pass.
        return Reply.error(400, "bad request (scripted)") if n % 3 == 0 else Reply.ok("\\boxed{B}")

    out = tmp_path / "run"
    with LoopbackServer(flaky) as server:
        config = _config(sample_dir, server, out, frame_cache_dir, tasks=["tools"], limit=9)
        first = asyncio.run(evaluate(config, command=["t"], show_progress=False))
        assert first.failed == 3
        scores = json.loads((out / "scores.json").read_text())
        assert scores["tasks"]["tools"]["n_failed"] == 3
        failed = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
        failed = [p for p in failed if p["error"]]
        assert len(failed) == 3 and all(
            p["response"] is None and p["error_kind"] == "request" for p in failed
        )

        server.reset(Reply.ok("\\boxed{B}"))
        second = asyncio.run(evaluate(config, command=["t"], show_progress=False))
        assert second.generated == 3 and second.failed == 0
        assert len(server.requests) == 3
        scores = json.loads((out / "scores.json").read_text())
        assert scores["tasks"]["tools"]["n_failed"] == 0 and scores["tasks"]["tools"]["n"] == 9


def test_unreadable_video_is_a_media_failure_not_an_answer(sample_dir, tmp_path, frame_cache_dir):
    data = tmp_path / "data"
    shutil.copytree(sample_dir, data)
    first = json.loads((data / "annotations/level1/tools.jsonl").read_text().splitlines()[0])
    (data / first["video_path"]).write_bytes(b"this is not a video")
    out = tmp_path / "run"
    with LoopbackServer(Reply.ok("\\boxed{A}")) as server:
        config = _config(data, server, out, tmp_path / "cache", tasks=["tools"], limit=3)
        result = asyncio.run(evaluate(config, command=["t"], show_progress=False))
        assert len(server.requests) == 2  # the broken item never reached the model
    assert result.failed == 1
    lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    broken = next(p for p in lines if p["item_id"] == f"tools/{first['id']}")
    assert broken["error_kind"] == "media" and first["video_path"].split("/")[-1] in broken["error"]
    assert json.loads((out / "scores.json").read_text())["tasks"]["tools"]["n_failed"] == 1


def test_rescore_with_an_llm_judge_and_a_judge_that_talks_nonsense(sample_dir, tmp_path, frame_cache_dir):
    out = tmp_path / "run"
    with LoopbackServer(Reply.ok("\\boxed{water, 37 °C, ethanol, ice}")) as model:
        config = _config(
            sample_dir,
            model,
            out,
            frame_cache_dir,
            tasks=["experimental_conclusion"],
            frames=FrameOptions(counts={"L3": 8}),
        )
        asyncio.run(evaluate(config, command=["t"], show_progress=False))
    offline = json.loads((out / "scores.json").read_text())
    assert offline["run"]["judge"]["offline"] is True

    def judge_reply(request: RecordedRequest) -> Reply:
        blanks = request.texts[-1].count("Blank ")
        return Reply.ok(json.dumps({"verdicts": [True] * max(1, blanks)}))

    with LoopbackServer(judge_reply) as judge:
        scores = asyncio.run(
            rescore_run(
                out, judge=JudgeChoice(spec=f"openai:phi-3-mini@{judge.openai_base_url}"), show_progress=False
            )
        )
        assert judge.requests, "the LLM judge was asked"
    assert scores.run.judge is not None and scores.run.judge.offline is False
    assert not any("OFFLINE" in note for note in scores.run.notes)
    judged = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert {j["judge"] for j in judged} >= {"offline-minilm"} and any(
        j["judge"].startswith("llm:") for j in judged
    )

    with LoopbackServer(Reply.ok("I cannot decide, sorry.")) as nonsense:
        scores = asyncio.run(
            rescore_run(
                out,
                # Another model (the cache answers the same model and request from any server).
                judge=JudgeChoice(spec=f"openai:phi-3-mini-broken@{nonsense.openai_base_url}"),
                show_progress=False,
            )
        )
    task = scores.tasks["experimental_conclusion"]
    assert task.n_judge_failed == task.n and task.score == 0.0


def test_a_judge_url_alone_means_the_papers_judge_model(sample_dir, tmp_path, frame_cache_dir):
    """ExpVid judged Level 3 with Phi-3-mini: `--judge-base-url` alone asks that model there."""
    out = tmp_path / "run"
    with LoopbackServer(Reply.ok("\\boxed{water, ice}")) as model:
        config = _config(
            sample_dir,
            model,
            out,
            frame_cache_dir,
            tasks=["scientific_discovery"],
            limit=2,
            frames=FrameOptions(counts={"L3": 4}),
        )
        with LoopbackServer(Reply.ok(json.dumps({"verdicts": [False, False, False]}))) as judge:
            config.judge_base_url = judge.openai_base_url
            asyncio.run(evaluate(config, command=["t"], show_progress=False))
            assert judge.requests and {r.model for r in judge.requests} == {
                "microsoft/Phi-3-mini-4k-instruct"
            }
    manifest = json.loads((out / "manifest.json").read_text())
    assert (
        manifest["judge"]["model"] == "microsoft/Phi-3-mini-4k-instruct"
        and manifest["judge"]["offline"] is False
    )
