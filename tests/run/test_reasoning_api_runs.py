"""`expvid eval` against servers that behave like the providers' reasoning APIs, with no extra flags.

The loopback server applies OpenAI's reasoning-model rules (400 for max_tokens and a temperature
other than 1, with OpenAI's bodies) or Anthropic's limits (100 images per request). Each run must
finish every item, record what was really sent, and say in its report how it departs from F.2.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import AnthropicRules, LoopbackServer, OpenAIReasoningRules, Reply

runner = CliRunner()


def _eval(sample_dir: Path, out: Path, cache: Path, *extra: str, tasks: str = "tools", limit: str = "3"):
    args = ["eval", "--data", str(sample_dir), "--out", str(out), "--tasks", tasks, "--limit", limit]
    return runner.invoke(app, [*args, "--cache-dir", str(cache), "--quiet", *extra])


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_openai_gpt5_runs_without_flags_and_the_report_says_what_was_sent(
    sample_dir, tmp_path, frame_cache_dir
):
    out = tmp_path / "gpt5"
    with LoopbackServer(Reply.ok("\\boxed{A}"), rules=[OpenAIReasoningRules()]) as server:
        result = _eval(sample_dir, out, frame_cache_dir, "--model", f"openai:gpt-5@{server.openai_base_url}")
        assert result.exit_code == 0, result.output
        assert server.refused == []  # the known rules phrased every request right the first time
        bodies = [request.body for request in server.requests]
    assert len(bodies) == 3
    assert all(b["max_completion_tokens"] == 8192 and "temperature" not in b for b in bodies)
    predictions = _lines(out / "predictions.jsonl")
    assert all(p["error"] is None and p["response"] == "\\boxed{A}" for p in predictions)
    for prediction in predictions:
        sent = prediction["sent"]
        assert sent["temperature"] is None and sent["token_limit_field"] == "max_completion_tokens"
        assert sent["input_mode"] == "images" and sent["size"] == 224
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["sent"]["values"]["temperature"] == {"none": 3}
    assert manifest["config"]["backend"]["param_rules"]["family"] == "openai-gpt-5"
    report = " ".join(result.stdout.split())
    assert "temperature not settable for this model: sent none on 3 of 3 request(s) (F.2: 0.1)" in report


def test_an_unknown_reasoning_model_is_learned_from_its_400s(sample_dir, tmp_path, frame_cache_dir):
    out = tmp_path / "house"
    with LoopbackServer(Reply.ok("\\boxed{B}"), rules=[OpenAIReasoningRules()]) as server:
        result = _eval(
            sample_dir, out, frame_cache_dir, "--model", f"openai:house-reasoner@{server.openai_base_url}",
            "--concurrency", "1",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        refused = [request.body for request in server.refused]
    assert len(refused) == 2  # max_tokens once, temperature once: then remembered for the run
    predictions = _lines(out / "predictions.jsonl")
    assert len(predictions) == 3 and all(p["error"] is None for p in predictions)
    assert all(p["sent"]["temperature"] is None for p in predictions)
    learned = json.loads((out / "manifest.json").read_text())["config"]["backend"]["param_fallbacks"]
    assert {entry["param"] for entry in learned} == {"max_tokens", "temperature"}
    report = " ".join(result.stdout.split())
    assert "sent none on 3 of 3 request(s) (F.2: 0.1); server refused it: Unsupported value" in report


def test_a_refusal_is_scored_unparseable_and_not_retried(sample_dir, tmp_path, frame_cache_dir):
    out = tmp_path / "refusing"
    with LoopbackServer(Reply.refused("I can't help with that.")) as server:
        args = ("--model", f"openai:gpt-4o@{server.openai_base_url}")
        first = _eval(sample_dir, out, frame_cache_dir, *args)
        assert first.exit_code == 0, first.output
        again = _eval(sample_dir, out, frame_cache_dir, *args, "--no-cache")
        assert len(server.requests) == 3  # the second run had nothing to redo
    predictions = _lines(out / "predictions.jsonl")
    assert all(p["refusal"] == "I can't help with that." and p["error"] is None for p in predictions)
    tools = json.loads((out / "scores.json").read_text())["tasks"]["tools"]
    assert (tools["n_unparseable"], tools["n_failed"]) == (3, 0)
    assert "3 refusal(s) by the provider" in " ".join(again.stdout.split())


def test_claude_gets_at_most_100_frames_and_the_paper_preset_gets_96(
    sample_dir, tmp_path, frame_cache_dir, monkeypatch
):
    monkeypatch.setenv("CLAUDE_TEST_KEY", "sk-ant-loopback")
    with LoopbackServer(Reply.ok("\\boxed{water}"), rules=[AnthropicRules()]) as server:
        common = (
            "--model", "anthropic:claude-sonnet-4", "--base-url", server.anthropic_base_url,
            "--api-key-env", "CLAUDE_TEST_KEY",
        )  # fmt: skip
        capped = _eval(
            sample_dir,
            tmp_path / "claude",
            frame_cache_dir,
            *common,
            tasks="experimental_conclusion",
            limit="1",
        )
        assert capped.exit_code == 0, capped.output
        preset = _eval(
            sample_dir, tmp_path / "claude96", frame_cache_dir, *common, "-S", "frame_preset=claude-sonnet-4",
            tasks="experimental_conclusion", limit="1",
        )  # fmt: skip
        assert preset.exit_code == 0, preset.output
        assert [request.n_images for request in server.requests] == [100, 96]
        assert server.refused == []
    manifest = json.loads((tmp_path / "claude" / "manifest.json").read_text())
    assert manifest["samplers"]["experimental_conclusion"]["num_frames"] == 100
    assert manifest["config"]["generation"]["image_limit"]["max_images"] == 100
    report = " ".join(capped.stdout.split())
    assert "at most 100 frames per request (experimental_conclusion): Anthropic Messages API" in report
    assert "temperature not settable for this model" in report  # SDK 2.x: no temperature parameter
    assert "at most 100 frames" not in " ".join(preset.stdout.split())
    prediction = _lines(tmp_path / "claude96" / "predictions.jsonl")[0]
    assert prediction["n_images"] == 96 and prediction["sent"]["temperature"] is None
