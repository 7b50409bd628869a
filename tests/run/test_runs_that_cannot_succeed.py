"""Runs that cannot succeed stop early; provider rules and resolved settings keep the rest running.

The servers answer as the real APIs do: OpenAI's 400 for a model served on the Responses API only
and its 404 for a model that does not exist; Gemini 2.5 Pro's 400 for a thinking budget of 0 (the
real `google-genai` SDK talks to the loopback's generateContent route); OpenAI reasoning models'
parameter rules.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import (
    GeminiThinkingRules,
    LoopbackServer,
    OpenAIReasoningRules,
    RecordedRequest,
    Reply,
)

runner = CliRunner()
RESPONSES_ONLY = (
    '{"error": {"message": "This model is only supported in v1/responses and not in v1/chat/completions.", '
    '"type": "invalid_request_error", "param": "model", "code": null}}'
)
NOT_FOUND = (
    '{"error": {"message": "The model `gpt-5-mimi` does not exist or you do not have access to it.", '
    '"type": "invalid_request_error", "param": null, "code": "model_not_found"}}'
)


def _eval(sample_dir: Path, out: Path, cache: Path, model: str, *extra: str) -> tuple[int, str]:
    args = ["eval", "--data", str(sample_dir), "--out", str(out), "--tasks", "tools", "--model", model,
            "--cache-dir", str(cache), "--quiet", "--frames", "L1=2", "--size", "32", "--concurrency", "2",
            *extra]  # fmt: skip
    result = runner.invoke(app, args, env={"OPENAI_API_KEY": "sk-loopback", "GEMINI_API_KEY": "gk-loopback"})
    return result.exit_code, result.output


def _lines(out: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


@pytest.mark.parametrize(
    ("status", "body", "name", "api"),
    # gpt-5-pro forced onto Chat Completions (it goes to the Responses API by default), and a typo.
    [(400, RESPONSES_ONLY, "gpt-5-pro", ["--api", "chat"]), (404, NOT_FOUND, "gpt-5-mimi", [])],
    ids=["responses-only", "typo"],
)
def test_identical_non_transient_errors_stop_the_run_and_it_resumes(
    sample_dir: Path, tmp_path: Path, frame_cache_dir: Path, status: int, body: str, name: str, api: list[str]
) -> None:
    out = tmp_path / "run"
    broken = Reply(status=status, raw_body=body.encode(), headers={"content-type": "application/json"})
    with LoopbackServer(broken) as server:
        model = f"openai:{name}@{server.openai_base_url}"
        args = ("--stop-after-errors", "4", *api)
        code, output = _eval(sample_dir, out, frame_cache_dir, model, *args)
        assert code == 2, output
        message = " ".join(output.split())
        assert message.startswith(
            f"error: stopped after 4 requests in a row failed with the same error (openai:{name}: HTTP {status}:"
        )
        assert "re-run the same command to resume" in message
        lines = _lines(out)
        assert len(lines) == 4 and all(line["error_kind"] == "request" for line in lines)
        assert not (out / "scores.json").exists()
        again, _ = _eval(sample_dir, out, frame_cache_dir, model, *args)
        assert again == 2 and len(server.requests) <= 8 + 2  # the resume stops as soon (+ requests in flight)
        server.reset(Reply.ok("\\boxed{A}"))  # the cause fixed: the same command finishes the run
        code, output = _eval(sample_dir, out, frame_cache_dir, model, *args)
    assert code == 0, output
    scores = json.loads((out / "scores.json").read_text())
    assert scores["run"]["n_failed"] == 0 and scores["run"]["complete"]


def test_transient_errors_and_mixed_outcomes_never_stop_a_run(
    sample_dir: Path, tmp_path: Path, frame_cache_dir: Path
) -> None:
    with LoopbackServer(Reply.error(503, "overloaded")) as server:
        code, output = _eval(
            sample_dir, tmp_path / "down", frame_cache_dir, f"openai:m@{server.openai_base_url}",
            "--stop-after-errors", "2", "--backend-option", "max_retries=0", "--limit", "6",
        )  # fmt: skip
    assert code == 3, output  # every item recorded as failed, none skipped
    assert len(_lines(tmp_path / "down")) == 6

    lock, seen = threading.Lock(), {"n": 0}

    def every_third(request: RecordedRequest) -> Reply:
        with lock:
            seen["n"] += 1
            fail = seen["n"] % 3 == 0
        return Reply(status=400, raw_body=RESPONSES_ONLY.encode()) if fail else Reply.ok("\\boxed{A}")

    with LoopbackServer(every_third) as server:
        code, output = _eval(
            sample_dir, tmp_path / "mixed", frame_cache_dir, f"openai:m@{server.openai_base_url}",
            "--stop-after-errors", "3", "--limit", "9", "--concurrency", "1",
        )  # fmt: skip
    # One request at a time, every third refused: two answers between failures. Outcomes are counted
    # as they come back, which may swap neighbours; three failures in a row would take far more.
    assert code == 3, output
    outcomes = [line.get("error") is None for line in _lines(tmp_path / "mixed")]
    assert len(outcomes) == 9 and outcomes.count(False) == 3, outcomes


def test_gemini_2_5_pro_without_thinking_sends_its_minimum_budget(
    sample_dir: Path, tmp_path: Path, frame_cache_dir: Path
) -> None:
    rules = [GeminiThinkingRules(models={"gemini-2.5-pro", "gemini-next"})]
    with LoopbackServer(Reply.ok("\\boxed{A}"), rules=rules, api_key="gk-loopback") as server:
        out = tmp_path / "pro"
        code, output = _eval(
            sample_dir, out, frame_cache_dir, "gemini:gemini-2.5-pro", "--base-url", server.gemini_base_url,
            "--no-thinking", "--limit", "3",
        )  # fmt: skip
        assert code == 0, output
        assert server.rejections == []  # known rules: never sent 0
        configs = [r.body["generationConfig"]["thinkingConfig"] for r in server.requests]
        budgets = {config.get("thinkingBudget", config.get("thinking_budget")) for config in configs}
        assert budgets == {128}
        sent = _lines(out)[0]["sent"]
        assert sent["thinking_budget"] == 128
        assert "cannot turn thinking off" in sent["not_sent"]["thinking"]
        report = runner.invoke(app, ["report", str(out)])
        assert (
            "thinking not as asked on 3 of 3 request(s): gemini-2.5-pro cannot turn thinking off"
            in " ".join(report.output.split())
        )

        # A model the rules do not know: its first 400 teaches, every request then succeeds.
        unknown = tmp_path / "unknown"
        code, output = _eval(
            sample_dir, unknown, frame_cache_dir, "gemini:gemini-next", "--base-url", server.gemini_base_url,
            "--no-thinking", "--limit", "4",
        )  # fmt: skip
        assert code == 0, output
    lines = _lines(unknown)
    assert all(line["error"] is None and line["sent"]["thinking_budget"] == 128 for line in lines)
    assert "the server refused to turn thinking off" in lines[-1]["sent"]["not_sent"]["thinking"]
    manifest = json.loads((unknown / "manifest.json").read_text())
    assert "only works in thinking mode" in manifest["config"]["backend"]["thinking_learned"]["no_disable"]


def test_resume_compares_resolved_settings_and_the_manifest_records_the_temperature_sent(
    sample_dir: Path, tmp_path: Path, frame_cache_dir: Path
) -> None:
    with LoopbackServer(Reply.ok("\\boxed{A}")) as server:
        out, model = tmp_path / "generic", f"openai:qwen@{server.openai_base_url}"
        assert _eval(sample_dir, out, frame_cache_dir, model, "--limit", "2")[0] == 0
        spelled_out = (
            "--backend-option",
            "send_temperature=true",
            "--backend-option",
            "max_tokens_param=max_tokens",
        )
        code, output = _eval(sample_dir, out, frame_cache_dir, model, "--limit", "2", *spelled_out)
        assert code == 0, output  # what the rules send anyway, given explicitly
        code, output = _eval(
            sample_dir,
            out,
            frame_cache_dir,
            model,
            "--limit",
            "2",
            "--backend-option",
            "send_temperature=false",
        )
        assert code == 2
        assert "  backend.phrasing.temperature_sent: run has True, now False" in output.splitlines()
        assert "  temperature: run has 0.1, now None" in output.splitlines()

    with LoopbackServer(Reply.ok("\\boxed{A}"), rules=[OpenAIReasoningRules(models={"o4-mini"})]) as server:
        out, model = tmp_path / "reasoning", f"openai:o4-mini@{server.openai_base_url}"
        assert _eval(sample_dir, out, frame_cache_dir, model, "--limit", "2")[0] == 0
        generation = json.loads((out / "manifest.json").read_text())["config"]["generation"]
        assert generation["temperature"] is None and generation["temperature_requested"] == 0.1
        code, output = _eval(sample_dir, out, frame_cache_dir, model, "--limit", "2", "--temperature", "0.7")
        assert code == 0, output  # never sent either way: the same run
        assert server.rejections == []


def test_a_run_made_with_the_previous_identity_still_resumes(
    sample_dir: Path, tmp_path: Path, frame_cache_dir: Path
) -> None:
    with LoopbackServer(Reply.ok("\\boxed{A}"), rules=[OpenAIReasoningRules(models={"o4-mini"})]) as server:
        out, model = tmp_path / "v2", f"openai:o4-mini@{server.openai_base_url}"
        assert _eval(sample_dir, out, frame_cache_dir, model, "--limit", "2")[0] == 0
        manifest = json.loads((out / "manifest.json").read_text())
        identity = manifest["config"]["identity"]  # as the previous release wrote it: options as given
        backend = identity["backend"]
        del backend["phrasing"]
        backend.update(send_temperature=None, max_tokens_param=None, thinking_style=None)
        identity.update(version=2, temperature=0.1)
        (out / "manifest.json").write_text(json.dumps(manifest))
        code, output = _eval(
            sample_dir,
            out,
            frame_cache_dir,
            model,
            "--limit",
            "2",
            "--backend-option",
            "send_temperature=false",
        )
        assert code == 0, output  # resolved the new way: the temperature was never sent either
