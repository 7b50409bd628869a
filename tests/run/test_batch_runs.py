"""`expvid eval --batch` end to end against the loopback server's batch endpoints."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from expvid.fakes.models.server import BatchPlan, LoopbackServer, OpenAIReasoningRules, RecordedRequest, Reply
from expvid.run.batch_settings import BatchSettings
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate
from expvid.run.report.table import build_table, load_runs
from expvid.run.report.text_formats import run_notes
from expvid.suites.registry import get_suite
from expvid.view import ViewSession
from expvid.view.overview import build_overview
from expvid.view.rows import build_rows

TASKS = ["tools", "materials"]


def _run(sample_dir: Path, model: str, out: Path, cache: Path, **fields: Any) -> EvalResult:
    config = EvalConfig(
        data=sample_dir,
        model=model,
        out=out,
        tasks=fields.pop("tasks", TASKS),
        limit=fields.pop("limit", 2),
        cache_dir=cache,
        n_bootstrap=20,
        **fields,
    )
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def _predictions(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _chunks(run: Path) -> list[dict[str, Any]]:
    return [json.loads(path.read_text()) for path in sorted((run / "batches").glob("chunk-*.json"))]


def _fresh_cache(root: Path, frames: Path) -> Path:
    cache = root / "cache"
    cache.mkdir(parents=True)
    (cache / "frames").symlink_to(frames / "frames", target_is_directory=True)
    return cache


def test_batch_answers_are_recorded_exactly_as_online_answers(
    sample_dir, model_server, tmp_path, frame_cache_dir
):
    model = f"openai:gpt-4o@{model_server.openai_base_url}"
    _run(sample_dir, model, tmp_path / "online", frame_cache_dir)
    model_server.reset(model_server.responder)
    batched = _run(
        sample_dir,
        model,
        tmp_path / "batch",
        _fresh_cache(tmp_path / "b", frame_cache_dir),
        batch=BatchSettings(poll_interval_s=0.01, max_requests=3),
    )
    assert {request.via for request in model_server.requests} == {
        c["handle"]["batch_id"] for c in _chunks(tmp_path / "batch")
    }
    chunks = _chunks(tmp_path / "batch")
    assert sorted(c["n_requests"] for c in chunks) == [1, 3] and all(c["state"] == "merged" for c in chunks)
    assert not list((tmp_path / "batch" / "batches").glob("*.input.jsonl"))  # frames not kept twice
    online = {p["item_id"]: p for p in _predictions(tmp_path / "online")}
    for prediction in _predictions(tmp_path / "batch"):
        twin = online[prediction["item_id"]]
        batch = prediction["sent"].pop("batch")
        assert batch["provider"] == "openai" and batch["id"] == prediction["meta"].pop("batch_id")
        for key in ("response", "sent", "frames", "n_images", "usage", "request_hash", "finish_reason"):
            assert prediction[key] == twin[key], key
        assert prediction["meta"]["prompt"] == twin["meta"]["prompt"] and prediction["latency_s"] is None
    scores = json.loads((tmp_path / "batch" / "scores.json").read_text())
    online_scores = json.loads((tmp_path / "online" / "scores.json").read_text())
    assert scores["tasks"]["tools"]["score"] == online_scores["tasks"]["tools"]["score"]
    cost, online_cost = scores["run"]["cost"], online_scores["run"]["cost"]
    assert cost["batch_requests"] == cost["requests"] == 4 and online_cost["batch_requests"] == 0
    assert cost["usd"] == pytest.approx(online_cost["usd"] / 2)  # the batch discount
    assert batched.pending == 0 and batched.generated == 4


def test_a_batch_left_behind_is_collected_by_another_process(
    sample_dir, model_server, tmp_path, frame_cache_dir
):
    model_server.batches.plan = BatchPlan(polls_per_status=3)
    model = f"openai:gpt-4o@{model_server.openai_base_url}"
    out = tmp_path / "run"
    settings = BatchSettings(poll_interval_s=0.01, wait=False)
    first = _run(sample_dir, model, out, frame_cache_dir, tasks=["tools"], batch=settings)
    assert first.pending == 2 and not (out / "predictions.jsonl").read_text()
    assert json.loads((out / "scores.json").read_text())["run"]["pending_batch_requests"] == 2
    waiting = "2 request(s) still waiting in the provider's batches are missing from the scores"
    report_notes = run_notes(build_table(get_suite("expvid"), load_runs([out]), references=[]))
    viewer_notes = build_overview(session := ViewSession([out]), build_rows(session))["table_notes"]
    assert any(waiting in note for note in report_notes) and any(waiting in note for note in viewer_notes)
    # The process died between creating the batch and recording its id: only metadata can find it.
    [chunk_path] = list((out / "batches").glob("chunk-*.json"))
    chunk = json.loads(chunk_path.read_text())
    chunk_path.write_text(json.dumps({**chunk, "state": "submitting", "handle": None}))
    second = _run(
        sample_dir, model, out, frame_cache_dir, tasks=["tools"], batch=BatchSettings(poll_interval_s=0.01)
    )
    assert second.pending == 0 and len(_predictions(out)) == 2
    assert model_server.batches.calls.count(("POST", "/v1/batches")) == 1  # found again, never paid twice
    assert len(model_server.requests) == 2
    assert json.loads((out / "scores.json").read_text())["run"]["complete"] is True


def test_expired_requests_go_online_and_refused_ones_are_recorded(sample_dir, tmp_path, frame_cache_dir):
    questions: dict[str, set[str]] = {}
    for item in get_suite("expvid").load(sample_dir, tasks=TASKS).items:
        questions.setdefault(item.task, set()).add(item.question)
    assert not questions["materials"] & questions["tools"]

    def asks(task: str, texts: list[str]) -> bool:
        return any(question in text for question in questions[task] for text in texts)

    def responder(request: RecordedRequest) -> Reply:
        if asks("materials", request.texts):
            return Reply.error(400, "Invalid 'messages[0].content': refused by the loopback")
        return Reply.ok("\\boxed{A}")

    def expires(body: dict[str, Any]) -> bool:  # the tools requests are not run before the window ends
        texts = [part["text"] for m in body["messages"] for part in m["content"] if part["type"] == "text"]
        return asks("tools", texts)

    with LoopbackServer(responder) as server:
        server.batches.plan = BatchPlan(outcome="expire", expires=expires)
        out = tmp_path / "run"
        result = _run(
            sample_dir,
            f"openai:gpt-4o@{server.openai_base_url}",
            out,
            frame_cache_dir,
            tasks=["materials", "tools"],
            batch=BatchSettings(poll_interval_s=0.01),
        )
        vias = [request.via for request in server.requests]
    [chunk] = _chunks(out)
    actions = {(error["kind"], error["action"]) for error in chunk["errors"]}
    assert ("http", "recorded") in actions and ("expired", "online") in actions
    assert vias.count("online") == 2  # the two expired requests, asked again at the standard price
    by_item = {p["item_id"]: p for p in _predictions(out)}
    refused = [p for p in by_item.values() if p["error"]]
    assert {p["task"] for p in refused} == {"materials"} and len(refused) == 2
    assert all("HTTP 400" in p["error"] and p["meta"]["batch_id"] for p in refused)
    assert refused[0]["error_kind"] == "request" and refused[0]["sent"]["max_tokens"] == 8192
    online = [p for p in by_item.values() if p["error"] is None and "batch" not in p["sent"]]
    assert {p["task"] for p in online} == {"tools"} and len(online) == 2 and result.failed == 2


def test_anthropic_batches_retry_expired_requests_in_a_new_batch(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with LoopbackServer(Reply.ok("\\boxed{C}")) as server:
        server.batches.plan = BatchPlan(outcome="expire", run_before_expiry=1)
        out = tmp_path / "claude"
        result = _run(
            sample_dir,
            f"anthropic:claude-sonnet-4-20250514@{server.anthropic_base_url}",
            out,
            frame_cache_dir,
            tasks=["tools"],
            batch=BatchSettings(poll_interval_s=0.01, retry="batch", max_rounds=3),
        )
    rounds = sorted((c["round"], c["n_requests"], len(c["errors"])) for c in _chunks(out))
    assert rounds == [(1, 2, 1), (2, 1, 0)]
    assert {r.via for r in server.requests} == {c["handle"]["batch_id"] for c in _chunks(out)}
    assert all(p["sent"]["batch"]["provider"] == "anthropic" for p in _predictions(out))
    scores = json.loads((out / "scores.json").read_text())
    assert (
        scores["run"]["cost"]["batch_requests"] == 2
        and "price table" in scores["run"]["cost"]["price"]["source"]
    )
    assert result.pending == 0 and result.failed == 0


def _batch_cost(out: Path) -> float:
    """What the run's batch answers cost at gpt-5's table price, at the batch discount."""
    total = 0.0
    for prediction in _predictions(out):
        usage = prediction["usage"]
        assert prediction["sent"]["batch"]["provider"] == "openai"
        total += (usage["prompt_tokens"] * 1.25 + usage["completion_tokens"] * 10) / 1e6 * 0.5
    return total


def test_a_batch_never_spends_past_its_cap_on_a_reasoning_model(sample_dir, tmp_path, frame_cache_dir):
    """gpt-5 answering ~8k tokens: each request is admitted by its bound (its frames, its prompt and
    all 8,192 tokens it may write, at half price), so a cap below the 4 answers' cost is never passed."""
    reply = Reply.counted("\\boxed{A}", completion_tokens=8000, reasoning_tokens=7900)
    with LoopbackServer(reply) as server:
        out = tmp_path / "run"
        result = _run(
            sample_dir,
            f"openai:gpt-5@{server.openai_base_url}",
            out,
            frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01),
            max_tokens=8192,
            max_cost=0.1,
        )
    spent = _batch_cost(out)
    assert len(_predictions(out)) == 2 and result.not_sent == 2 and result.stopped is not None
    assert 0.07 < spent <= 0.1  # two answers of ~$0.04; a third's bound (~$0.042) passes the cap
    scores = json.loads((out / "scores.json").read_text())
    assert scores["run"]["cost"]["usd"] == pytest.approx(spent, abs=1e-6)  # rounded to 6 places
    assert "stopped at the budget --max-cost $0.1" in scores["run"]["budget_stop"]


def test_a_batch_submits_what_its_cap_allows_as_results_give_room_back(sample_dir, tmp_path, frame_cache_dir):
    """Short answers cost far less than their bound: the requests that did not fit go in a later
    batch once the first batch's results have given the difference back, and the cap holds."""
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=500)) as server:
        out = tmp_path / "run"
        result = _run(
            sample_dir,
            f"openai:gpt-5@{server.openai_base_url}",
            out,
            frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01),
            max_tokens=8192,
            max_cost=0.1,
        )
    chunks = _chunks(out)
    assert result.stopped is None and result.not_sent == 0 and len(_predictions(out)) == 4
    assert len(chunks) >= 2 and all(c["n_requests"] <= 2 for c in chunks)  # never 3 bounds at once
    assert _batch_cost(out) <= 0.1


def test_a_parameter_the_model_refuses_in_a_batch_is_learned_online(sample_dir, tmp_path, frame_cache_dir):
    # A reasoning model the harness does not know: every batched line carries max_tokens and a
    # temperature, which it refuses with OpenAI's 400s; asked online, the backend learns both.
    with LoopbackServer("\\boxed{A}", rules=[OpenAIReasoningRules(models=["my-reasoner"])]) as server:
        out = tmp_path / "run"
        result = _run(
            sample_dir,
            f"openai:my-reasoner@{server.openai_base_url}",
            out,
            frame_cache_dir,
            tasks=["tools"],
            batch=BatchSettings(poll_interval_s=0.01),
        )
    [chunk] = _chunks(out)
    assert {(e["kind"], e["action"]) for e in chunk["errors"]} == {("parameter", "online")}
    predictions = _predictions(out)
    assert result.failed == 0 and len(predictions) == 2 and all(p["error"] is None for p in predictions)
    assert all(p["sent"]["token_limit_field"] == "max_completion_tokens" for p in predictions)
    assert all(p["sent"]["temperature"] is None for p in predictions)


def test_batch_flags_on_the_command_line(sample_dir, model_server, tmp_path, frame_cache_dir):
    from typer.testing import CliRunner

    from expvid.cli.main import app

    runner = CliRunner()
    base = ["eval", "--data", str(sample_dir), "--model", f"openai:gpt-4o@{model_server.openai_base_url}"]
    base += ["--out", str(tmp_path / "run"), "--tasks", "tools", "--limit", "1"]
    base += ["--cache-dir", str(frame_cache_dir), "--quiet", "--batch"]
    bad = runner.invoke(app, [*base, "--batch-option", "retry=later"])
    assert bad.exit_code == 2 and "retry" in bad.output and not (tmp_path / "run").exists()
    model_server.batches.plan = BatchPlan(polls_per_status=5)
    left = runner.invoke(
        app, [*base, "--batch-option", "wait=false", "--batch-option", "poll_interval_s=0.01"]
    )
    # Left in the provider's batches: not finished, and a script can tell (exit 5, not 0)
    assert left.exit_code == 5, left.output
    assert "1 request(s) are waiting in the provider's batches" in left.output
    assert "(partial, incomplete, waiting for batches)" in left.output
    collected = runner.invoke(app, [*base, "--batch-option", "poll_interval_s=0.01"])
    assert collected.exit_code == 0, collected.output
    assert "already waiting in 1 batch(es)" in collected.output
    assert "waiting in the provider's batches" not in collected.output
    assert len(_predictions(tmp_path / "run")) == 1 and len(model_server.requests) == 1
