"""Batches are created once, whatever is killed when: intents, lookups, candidates, duplicates.

The kill points are real: the loopback stores the batch and then either drops the connection (the
create call's answer is lost) or SIGKILLs the `expvid eval` process before answering (the process
dies between creating the batch and recording it). The same command then resumes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from expvid.fakes.models.server import BatchPlan, LoopbackServer, Reply
from expvid.run.batch_settings import BatchSettings
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate


def _run(sample_dir: Path, model: str, out: Path, cache: Path, **fields: Any) -> EvalResult:
    config = EvalConfig(
        data=sample_dir,
        model=model,
        out=out,
        tasks=["tools"],
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


def _killed_at_create(server: LoopbackServer, args: list[str], env: dict[str, str]) -> int:
    """Run `expvid eval ARGS` in a process the loopback SIGKILLs right after it creates a batch,
    before the create call is answered: the process dies between creating and recording it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "expvid.cli.main", "eval", *args],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    server.batches.plan.on_create = lambda batch_id: os.kill(process.pid, signal.SIGKILL)
    try:
        _, err = process.communicate(timeout=120)
    finally:
        server.batches.plan.on_create = None
    assert process.returncode == -signal.SIGKILL, err
    return process.pid


def _cli(sample_dir: Path, model: str, out: Path, cache: Path, *options: str) -> list[str]:
    return [
        "--data", str(sample_dir), "--model", model, "--out", str(out), "--tasks", "tools", "--limit", "2",
        "--cache-dir", str(cache), "--quiet", "--batch", "--batch-option", "poll_interval_s=0.01", *options,
    ]  # fmt: skip


def test_a_lost_create_answer_is_found_past_hundreds_of_newer_batches(sample_dir, tmp_path, frame_cache_dir):
    """The create call's answer is lost and 750 batches of the organisation were created after it:
    the lookup lists back to the intent's time, page by page (100 a page), and pays nothing twice."""
    with LoopbackServer("\\boxed{A}") as server:
        server.batches.plan = BatchPlan(
            drop_create_answer=True,
            on_create=lambda batch_id: server.batches.seed_openai(750),
        )
        out = tmp_path / "run"
        result = _run(
            sample_dir, f"openai:gpt-4o@{server.openai_base_url}", out, frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01),
        )  # fmt: skip
        calls = list(server.batches.calls)
        vias = {request.via for request in server.requests}
    assert calls.count(("POST", "/v1/batches")) == 1  # created once, never again
    assert calls.count(("GET", "/v1/batches")) >= 8  # 751 batches at 100 a page
    [chunk] = _chunks(out)
    assert chunk["state"] == "merged" and chunk["attempt"] == 1 and chunk["content_sha256"]
    assert vias == {chunk["handle"]["batch_id"]}  # every answer came from that one batch
    assert result.pending == 0 and len(_predictions(out)) == 2


def test_openai_a_process_killed_between_create_and_record_resumes_without_paying_twice(
    sample_dir, tmp_path, frame_cache_dir
):
    with LoopbackServer("\\boxed{A}") as server:
        model = f"openai:gpt-4o@{server.openai_base_url}"
        out = tmp_path / "run"
        pid = _killed_at_create(server, _cli(sample_dir, model, out, frame_cache_dir), {})
        [chunk] = _chunks(out)
        assert chunk["state"] == "submitting" and chunk["handle"] is None and chunk["intent_at"]
        assert json.loads((out / ".lock").read_text())["pid"] == pid  # the dead process's lock is left
        server.batches.seed_openai(120)  # the organisation goes on creating batches meanwhile
        result = _run(sample_dir, model, out, frame_cache_dir, batch=BatchSettings(poll_interval_s=0.01))
        calls = list(server.batches.calls)
        requests = list(server.requests)
    assert calls.count(("POST", "/v1/batches")) == 1 and len(requests) == 2
    assert result.pending == 0 and len(_predictions(out)) == 2
    assert _chunks(out)[0]["state"] == "merged"


def test_a_create_that_never_reached_the_provider_is_made_from_the_recorded_upload(
    sample_dir, tmp_path, frame_cache_dir
):
    """Killed after the intent and the upload were recorded but before the batch existed: the lookup
    finds nothing, and the same uploaded file is created as the chunk's next attempt."""
    with LoopbackServer("\\boxed{A}") as server:
        model = f"openai:gpt-4o@{server.openai_base_url}"
        out = tmp_path / "run"
        _killed_at_create(server, _cli(sample_dir, model, out, frame_cache_dir), {})
        server.batches.openai.clear()  # as if the process had died just before its create call
        _run(sample_dir, model, out, frame_cache_dir, batch=BatchSettings(poll_interval_s=0.01))
        calls = list(server.batches.calls)
        batches = list(server.batches.openai.values())
    [chunk] = _chunks(out)
    assert chunk["attempt"] == 2 and chunk["state"] == "merged"
    assert calls.count(("POST", "/v1/files")) == 1  # the upload recorded before the kill was reused
    [batch] = batches
    assert batch.metadata == {
        "expvid_run": chunk["run_uid"],
        "expvid_chunk": chunk["local_id"],
        "expvid_attempt": "2",
    }
    assert len(_predictions(out)) == 2


def test_anthropic_a_killed_creation_settles_its_candidates_by_their_custom_ids(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    """Message batches carry no metadata: batches created in the window with the chunk's number of
    requests are candidates. Those still running are cancelled (they cannot be ruled out), and the
    custom ids of their results tell the chunk's own batch apart from the organisation's others."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with LoopbackServer("\\boxed{A}") as server:
        model = f"anthropic:claude-sonnet-4-20250514@{server.anthropic_base_url}"
        out = tmp_path / "run"
        server.batches.plan.polls_per_status = 3
        _killed_at_create(
            server, _cli(sample_dir, model, out, frame_cache_dir), {"ANTHROPIC_API_KEY": "test-key"}
        )
        [ours] = list(server.batches.anthropic)
        others = server.batches.seed_anthropic(
            [2, 2, 5]
        )  # two look like the chunk (2 requests), one does not
        result = _run(sample_dir, model, out, frame_cache_dir, batch=BatchSettings(poll_interval_s=0.01))
        batches = dict(server.batches.anthropic)
        creates = server.batches.calls.count(("POST", "/v1/messages/batches"))
        requests = list(server.requests)
    assert creates == 1  # the chunk's batch was found, not created again
    assert batches[ours].processing_status == "ended" and batches[ours].cancel_initiated_at is not None
    assert [batches[b].cancel_initiated_at is not None for b in others] == [True, True, False]
    [chunk] = _chunks(out)
    assert chunk["handle"]["batch_id"] == ours and chunk["possible_duplicates"] == []
    notes = json.loads((out / "manifest.json").read_text())["config"]["batch"]["notes"]
    assert sum("holds other requests: not this run's" in note for note in notes) == 2
    # The cancelled batch ran nothing: each request was asked once, online, and never paid twice.
    assert len(requests) == 2 and {r.via for r in requests} == {"online"}
    assert result.pending == 0 and len(_predictions(out)) == 2


def test_anthropic_waiting_instead_of_cancelling_keeps_the_chunks_answers(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with LoopbackServer("\\boxed{A}") as server:
        model = f"anthropic:claude-sonnet-4-20250514@{server.anthropic_base_url}"
        out = tmp_path / "run"
        server.batches.plan = BatchPlan(drop_create_answer=True)  # the answer is lost, in-process
        _run(
            sample_dir,
            model,
            out,
            frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01, uncertain="wait"),
        )
        batches = list(server.batches.anthropic.values())
        requests = list(server.requests)
    [batch] = batches
    assert batch.cancel_initiated_at is None and {r.via for r in requests} == {batch.id}
    assert len(_predictions(out)) == 2 and all(p["meta"]["batch_id"] == batch.id for p in _predictions(out))


def test_a_candidate_that_cannot_be_read_is_named_as_a_possible_duplicate(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    """Where certainty is impossible the run says exactly which batch ids may be duplicates."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with LoopbackServer("\\boxed{A}") as server:
        model = f"anthropic:claude-sonnet-4-20250514@{server.anthropic_base_url}"
        out = tmp_path / "run"
        server.batches.plan = BatchPlan(drop_create_answer=True, polls_per_status=10)
        first = _run(
            sample_dir, model, out, frame_cache_dir,
            batch=BatchSettings(poll_interval_s=0.01, uncertain="wait", wait=False),
        )  # fmt: skip
        [chunk] = _chunks(out)
        assert chunk["state"] == "unresolved" and len(chunk["candidates"]) == 1 and first.pending == 2
        [candidate] = chunk["candidates"]
        server.batches.anthropic[candidate].results.clear()  # its results can no longer be read
        server.batches.anthropic[candidate].processing_status = "ended"
        server.batches.plan.drop_create_answer = False
        _run(sample_dir, model, out, frame_cache_dir, batch=BatchSettings(poll_interval_s=0.01))
    notes = json.loads((out / "manifest.json").read_text())["config"]["batch"]["notes"]
    assert any(candidate in note for note in notes)
    assert len(_predictions(out)) == 2


def test_batches_list_and_cancel_show_what_a_run_has_at_its_provider(sample_dir, tmp_path, frame_cache_dir):
    from typer.testing import CliRunner

    from expvid.cli.main import app

    runner = CliRunner()
    with LoopbackServer(Reply.counted("\\boxed{A}", completion_tokens=5)) as server:
        server.batches.plan = BatchPlan(outcome="stall")  # runs until cancelled
        model = f"openai:gpt-4o@{server.openai_base_url}"
        out = tmp_path / "run"
        args = _cli(
            sample_dir, model, out, frame_cache_dir, "--batch-option", "wait=false", "--price", "2.5,10"
        )
        left = runner.invoke(app, ["eval", *args])
        assert left.exit_code == 5, left.output
        [chunk] = _chunks(out)
        batch_id = chunk["handle"]["batch_id"]
        listed = runner.invoke(app, ["batches", "list", str(out)])
        assert listed.exit_code == 0, listed.output
        [row] = [line for line in listed.output.splitlines() if batch_id in line]
        assert "| openai |" in row and "| in_progress |" in row and "| 2 |" in row
        cancelled = runner.invoke(app, ["batches", "cancel", str(out)])
        assert cancelled.exit_code == 0 and f"{batch_id}: cancelling" in cancelled.output
        assert server.batches.openai[batch_id].status == "cancelling"
        collected = runner.invoke(
            app, ["eval", *_cli(sample_dir, model, out, frame_cache_dir, "--price", "2.5,10")]
        )
        assert collected.exit_code == 0, collected.output
        after = runner.invoke(app, ["batches", "list", str(out), "--offline"])
        vias = [request.via for request in server.requests]
    assert vias == ["online", "online"]  # the cancelled batch ran nothing: its requests went online
    [row] = [line for line in after.output.splitlines() if batch_id in line]
    assert "| merged |" in row and "| cancelled |" in row
    assert runner.invoke(app, ["batches", "list", str(tmp_path)]).exit_code == 2  # not a run
