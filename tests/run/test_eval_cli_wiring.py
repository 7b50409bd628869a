"""`expvid eval` flags reach the backend: thinking switch and budget, several base URLs, backend options."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, Reply

runner = CliRunner()


def _eval(sample_dir: Path, out: Path, cache: Path, *extra: str):
    args = ["eval", "--data", str(sample_dir), "--out", str(out), "--tasks", "tools", "--limit", "4"]
    return runner.invoke(app, [*args, "--cache-dir", str(cache), "--quiet", *extra])


def test_thinking_flags_reach_the_request_and_the_run_identity(sample_dir, tmp_path, frame_cache_dir):
    with LoopbackServer(Reply.ok("<think>hmm</think>\\boxed{A}")) as server:
        result = _eval(
            sample_dir,
            tmp_path / "think",
            frame_cache_dir,
            "--model",
            f"openai:loopback@{server.openai_base_url}",
            "--thinking",
            "--thinking-budget",
            "512",
        )
        assert result.exit_code == 0, result.output
        bodies = [request.body for request in server.requests]
    assert bodies and all(body["chat_template_kwargs"]["enable_thinking"] is True for body in bodies)
    manifest = json.loads((tmp_path / "think" / "manifest.json").read_text())
    assert manifest["config"]["identity"]["thinking"] == {"enabled": True, "budget_tokens": 512}
    predictions = [
        json.loads(line) for line in (tmp_path / "think" / "predictions.jsonl").read_text().splitlines()
    ]
    assert all("<think>hmm</think>" in p["response"] for p in predictions)  # reasoning kept in the record
    scores = json.loads((tmp_path / "think" / "scores.json").read_text())
    assert scores["tasks"]["tools"]["n_unparseable"] == 0  # ... and removed before extraction


def test_repeated_base_urls_spread_requests_over_endpoints(sample_dir, tmp_path, frame_cache_dir):
    with LoopbackServer(Reply.ok("\\boxed{B}")) as first, LoopbackServer(Reply.ok("\\boxed{B}")) as second:
        result = _eval(
            sample_dir,
            tmp_path / "multi",
            frame_cache_dir,
            "--model",
            "openai:loopback",
            "--base-url",
            first.openai_base_url,
            "--base-url",
            second.openai_base_url,
            "--backend-option",
            "max_retries=1",
            "--no-cache",
        )
        assert result.exit_code == 0, result.output
        counts = len(first.requests), len(second.requests)
    assert sum(counts) == 4 and min(counts) >= 1, counts


def test_bad_backend_option_is_a_clear_error(sample_dir, tmp_path, frame_cache_dir):
    result = _eval(
        sample_dir, tmp_path / "bad", frame_cache_dir, "--model", "random", "--backend-option", "oops"
    )
    assert result.exit_code != 0 and "KEY=VALUE" in result.output
    result = _eval(
        sample_dir,
        tmp_path / "bad2",
        frame_cache_dir,
        "--model",
        "random",
        "--backend-option",
        "no_such_option=1",
    )
    assert result.exit_code == 2 and "no_such_option" in result.output
