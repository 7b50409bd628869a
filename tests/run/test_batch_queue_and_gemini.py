"""Provider queue limits (OpenAI's enqueued tokens), partial results, and Gemini's batch mode end to end."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from expvid.fakes.models.server import BatchPlan, LoopbackServer, Reply
from expvid.run.batch_settings import BatchSettings
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate


def _run(sample_dir: Path, model: str, out: Path, cache: Path, **fields: Any) -> EvalResult:
    config = EvalConfig(
        data=sample_dir,
        model=model,
        out=out,
        tasks=fields.pop("tasks", ["tools", "materials"]),
        limit=2,
        cache_dir=cache,
        n_bootstrap=10,
        **fields,
    )
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def _chunks(run: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((run / "batches").glob("chunk-*.json"))]


def _predictions(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


#: 4 requests of ~2,100 prompt tokens (8 frames of 224 px on gpt-4o): all of them pass 5,000.
LIMIT = 5_000


def test_a_chunk_refused_for_the_queue_limit_waits_and_is_resubmitted_within_it(
    sample_dir, tmp_path, frame_cache_dir
):
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        server.batches.plan = BatchPlan(queue_limit_tokens=LIMIT)
        out = tmp_path / "run"
        result = _run(
            sample_dir, f"openai:gpt-4o@{server.openai_base_url}", out, frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01, queue_wait_s=0.01),
        )  # fmt: skip
        batches = dict(server.batches.openai)
        vias = [request.via for request in server.requests]
    refused = [b for b in batches.values() if b.errors and b.errors[0]["code"] == "token_limit_exceeded"]
    assert len(refused) == 1 and "Limit: 5,000 enqueued tokens" in refused[0].errors[0]["message"]
    ran = [b for b in batches.values() if b.status == "completed"]
    assert all(b.prompt_tokens <= LIMIT for b in ran) and sum(len(b.lines) for b in ran) == 4
    assert "online" not in vias and len(vias) == 4  # nothing asked twice, nothing at the online price
    assert result.pending == 0 and len(_predictions(out)) == 4
    manifest = json.loads((out / "manifest.json").read_text())["config"]["batch"]
    assert manifest["queue_refusals"] == 1 and manifest["retried_online"] == 0


def test_a_known_queue_limit_sizes_the_chunks_before_any_refusal(sample_dir, tmp_path, frame_cache_dir):
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        server.batches.plan = BatchPlan(queue_limit_tokens=LIMIT)
        out = tmp_path / "run"
        _run(
            sample_dir, f"openai:gpt-4o@{server.openai_base_url}", out, frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01, queue_tokens=LIMIT),
        )  # fmt: skip
        batches = list(server.batches.openai.values())
    assert all(b.status == "completed" for b in batches) and len(batches) >= 2
    assert len(_predictions(out)) == 4


def test_requests_go_online_after_a_queue_refusal_only_when_asked(sample_dir, tmp_path, frame_cache_dir):
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        server.batches.plan = BatchPlan(queue_limit_tokens=LIMIT)
        out = tmp_path / "run"
        _run(
            sample_dir, f"openai:gpt-4o@{server.openai_base_url}", out, frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01, on_queue_limit="online"),
        )  # fmt: skip
        vias = [request.via for request in server.requests]
    assert vias == ["online"] * 4
    assert all("batch" not in p["sent"] for p in _predictions(out))


def test_the_documented_tier_limit_sizes_chunks():
    from expvid.models.batch.limits import queue_limit

    assert queue_limit("openai", "gpt-4o-2024-08-06", 1, None) == 90_000
    assert queue_limit("openai", "gpt-5", 2, None) == 3_000_000
    assert queue_limit("openai", "gpt-5", 4, None) == 3_000_000  # no figure above tier 2: tier 2's
    assert queue_limit("openai", "gpt-4o", 3, 777) == 777  # the organisation's own figure wins
    assert queue_limit("openai", "gpt-4o", None, None) is None  # learned from a refusal
    assert queue_limit("anthropic", "claude-sonnet-4", 1, None) is None


def test_results_missing_from_a_batch_are_asked_again(sample_dir, tmp_path, frame_cache_dir):
    with LoopbackServer("\\boxed{A}") as server:
        server.batches.plan = BatchPlan(missing_results=1)  # and shuffled, as by default
        out = tmp_path / "run"
        result = _run(
            sample_dir, f"openai:gpt-4o@{server.openai_base_url}", out, frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01),
        )  # fmt: skip
        vias = [request.via for request in server.requests]
    [chunk] = _chunks(out)
    assert [(e["kind"], e["action"]) for e in chunk["errors"]] == [("missing", "online")]
    assert vias.count("online") == 1 and len(vias) == 5 and result.failed == 0


@pytest.fixture
def gemini_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")


def test_gemini_batches_answer_exactly_as_online(sample_dir, tmp_path, frame_cache_dir, gemini_key):
    with LoopbackServer("\\boxed{B}") as server:
        model = f"gemini:gemini-2.5-flash@{server.gemini_base_url}"
        _run(sample_dir, model, tmp_path / "online", frame_cache_dir, tasks=["tools"])
        online_bodies = sorted(json.dumps(r.body, sort_keys=True) for r in server.requests)
        server.reset(server.responder)
        cache = tmp_path / "fresh"
        cache.mkdir()
        (cache / "frames").symlink_to(frame_cache_dir / "frames", target_is_directory=True)
        result = _run(
            sample_dir,
            model,
            tmp_path / "batch",
            cache,
            tasks=["tools"],
            batch=BatchSettings(poll_interval_s=0.01),
        )
        batch_bodies = sorted(json.dumps(r.body, sort_keys=True) for r in server.requests)
        vias = {r.via for r in server.requests}
        [stored] = server.batches.gemini.batches.values()
    assert batch_bodies == online_bodies  # the batched requests are the online ones, byte for byte
    [chunk] = _chunks(tmp_path / "batch")
    assert vias == {chunk["handle"]["batch_id"]} and chunk["state"] == "merged"
    assert stored.display_name == f"expvid-{chunk['run_uid']}-{chunk['local_id']}-a1"
    online = {p["item_id"]: p for p in _predictions(tmp_path / "online")}
    for prediction in _predictions(tmp_path / "batch"):
        assert prediction["sent"]["batch"]["provider"] == "gemini"
        assert prediction["response"] == online[prediction["item_id"]]["response"]
        assert prediction["usage"] == online[prediction["item_id"]]["usage"]
    cost = json.loads((tmp_path / "batch" / "scores.json").read_text())["run"]["cost"]
    assert cost["batch_requests"] == 2 and result.pending == 0


def test_gemini_a_lost_create_is_found_by_its_display_name(sample_dir, tmp_path, frame_cache_dir, gemini_key):
    with LoopbackServer("\\boxed{B}") as server:
        server.batches.plan = BatchPlan(drop_create_answer=True)
        out = tmp_path / "run"
        _run(
            sample_dir, f"gemini:gemini-2.5-flash@{server.gemini_base_url}", out, frame_cache_dir,
            tasks=["tools"], batch=BatchSettings(poll_interval_s=0.01),
        )  # fmt: skip
        creates = [call for call in server.batches.calls if call[1].endswith(":batchGenerateContent")]
    assert len(creates) == 1 and len(_predictions(out)) == 2
    assert _chunks(out)[0]["state"] == "merged"


def test_a_create_refused_with_429_waits_for_room_instead_of_going_online(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    """Anthropic (and Gemini) refuse a create with 429 when the queue is full: nothing was created,
    so the chunk is submitted again later; its requests never go online unless asked."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setattr("expvid.models.batch.types.RETRY_BASE_S", 0.001)  # the client's own retries, fast
    with LoopbackServer("\\boxed{A}") as server:
        server.batches.plan = BatchPlan(refuse_creates=7)  # more than the client's 6 tries of one create
        out = tmp_path / "run"
        result = _run(
            sample_dir, f"anthropic:claude-sonnet-4-20250514@{server.anthropic_base_url}", out, frame_cache_dir,
            tasks=["tools"], batch=BatchSettings(poll_interval_s=0.01, queue_wait_s=0.01),
        )  # fmt: skip
        creates = server.batches.calls.count(("POST", "/v1/messages/batches"))
        vias = {request.via for request in server.requests}
        batches = list(server.batches.anthropic)
    assert creates == 8 and len(batches) == 1 and vias == set(batches)
    assert result.pending == 0 and len(_predictions(out)) == 2
    assert json.loads((out / "manifest.json").read_text())["config"]["batch"]["queue_refusals"] == 1


def test_a_request_larger_than_the_whole_queue_is_recorded_not_retried_forever(
    sample_dir, tmp_path, frame_cache_dir
):
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        server.batches.plan = BatchPlan(queue_limit_tokens=1_000)  # under one request's ~2,100 tokens
        out = tmp_path / "run"
        result = _run(
            sample_dir, f"openai:gpt-4o@{server.openai_base_url}", out, frame_cache_dir,
            tasks=["tools"], batch=BatchSettings(poll_interval_s=0.01, queue_wait_s=0.01),
        )  # fmt: skip
        ran = [request.via for request in server.requests]
    predictions = _predictions(out)
    assert ran == [] and len(predictions) == 2 and result.failed == 2
    assert all("larger than the provider's batch queue limit (1000" in p["error"] for p in predictions)
