"""`expvid eval` on a model served only by the Responses API: chosen automatically, recorded as sent."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, OpenAIResponsesRules, Reply, ResponsesOnlyModels

runner = CliRunner()


def test_gpt_5_pro_runs_on_the_responses_api_and_its_summary_is_not_the_answer(
    sample_dir, tmp_path, frame_cache_dir
):
    reply = Reply.ok("The tool is \\boxed{A}", reasoning="Could it be \\boxed{C}? No.", reasoning_tokens=50)
    rules = [ResponsesOnlyModels(["gpt-5-pro"]), OpenAIResponsesRules(efforts=("high",))]
    with LoopbackServer(reply, rules=rules) as server:
        out = tmp_path / "run"
        args = ["eval", "--data", str(sample_dir), "--model", f"openai:gpt-5-pro@{server.openai_base_url}"]
        args += ["--out", str(out), "--tasks", "tools", "--limit", "2", "--cache-dir", str(frame_cache_dir)]
        result = runner.invoke(app, [*args, "--quiet", "--thinking"])
        assert result.exit_code == 0, result.output
        assert {r.path for r in server.requests} == {"/v1/responses"} and server.refused == []
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert all(p["model"] == "openai-responses:gpt-5-pro" for p in predictions)
    assert all(p["reasoning"] == "Could it be \\boxed{C}? No." for p in predictions)
    assert all(
        p["sent"]["api"] == "responses" and p["sent"]["reasoning_effort"] == "high" for p in predictions
    )
    assert all(p["n_images"] == 8 and len(p["frames"]) == 8 for p in predictions)
    scores = [json.loads(line) for line in (out / "item_scores.jsonl").read_text().splitlines()]
    assert [s["extracted"] for s in scores] == ["A", "A"]  # the summary's \boxed{C} is never read
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["backend"]["api"] == "responses"
    assert manifest["config"]["sent"]["not_sent"]["seed"] == {"the Responses API has no seed parameter": 2}
