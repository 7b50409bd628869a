"""Judges as a researcher meets them: a mistyped judge server, a reasoning model as the judge, a judge
server that answered badly and was fixed, and the paper's per-blank protocol.

Every judge here is a real HTTP server on loopback answering as OpenAI does: reasoning models
refuse `max_tokens` and temperatures with OpenAI's 400 bodies (`OpenAIReasoningRules`) and, like
the real ones, spend their completion budget on hidden reasoning first: with too small a budget
the reply is empty with `finish_reason: length`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, OpenAIReasoningRules, RecordedRequest, Reply
from expvid.models import BackendConfigError, create_backend
from expvid.models.spec import spec_problem

runner = CliRunner()
_BLANK = re.compile(r"^Blank (\d+)$", re.MULTILINE)


def _verdicts(request: RecordedRequest, right: Callable[[int], bool] = lambda n: n == 1) -> str:
    """Blank 1 right, the others wrong: the verdicts the prompt's listed blanks deserve."""
    blanks = [int(n) for n in _BLANK.findall(request.texts[-1])]
    return json.dumps({"verdicts": [right(n) for n in blanks]})


def reasoning_judge(needs: int) -> Callable[[RecordedRequest], Reply]:
    """A model that reasons `needs` tokens before answering, within its completion budget."""

    def respond(request: RecordedRequest) -> Reply:
        body = request.body
        budget = int(body.get("max_completion_tokens") or body.get("max_tokens") or 0)
        if budget < needs + 50:
            return Reply.ok("", finish_reason="length", reasoning_tokens=budget, completion_tokens=budget)
        return Reply.ok(_verdicts(request), reasoning_tokens=needs, completion_tokens=needs + 20)

    return respond


@pytest.fixture
def level3_run(sample_dir: Path, tmp_path: Path, model_server: LoopbackServer, frame_cache_dir: Path) -> Path:
    """A run of two Level-3 items: every blank filled (with "water"), judged offline."""
    out = tmp_path / "run"
    args = ["eval", "--data", str(sample_dir), "--out", str(out), "--model", f"openai:lb@{model_server.openai_base_url}",
            "--tasks", "experimental_conclusion", "--limit", "2", "--frames", "L3=2", "--size", "32",
            "--cache-dir", str(frame_cache_dir), "--quiet"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def _judgments(out: Path, prefix: str) -> list[dict]:  # type: ignore[type-arg]
    lines = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    return [line for line in lines if line["judge"].startswith(prefix)]


def _n_blanks(out: Path) -> int:
    scores = [json.loads(line) for line in (out / "item_scores.jsonl").read_text().splitlines()]
    return int(sum(score["possible"] for score in scores))


def test_a_judge_server_without_a_scheme_is_refused_by_every_command(
    level3_run: Path, tmp_path: Path
) -> None:
    spec = "openai:phi-3-mini@127.0.0.1:9/v1"
    scored = runner.invoke(app, ["score", str(level3_run), "--judge", spec])
    assert (
        scored.exit_code == 2
        and "without a scheme" in scored.output
        and "http://127.0.0.1:9/v1" in scored.output
    )
    built = runner.invoke(
        app, ["build", str(tmp_path), "--out", str(tmp_path / "c"), "--llm", "openai:m@host:8000/v1"]
    )
    assert built.exit_code == 2 and "without a scheme" in built.output
    with pytest.raises(BackendConfigError, match="without a scheme"):
        create_backend(spec)  # a library caller meets the same check
    assert (
        spec_problem("anthropic:claude-3-5-sonnet-v2@20241022") is None
    )  # Vertex's model names keep their '@'


def test_a_reasoning_model_judges_with_a_budget_that_fits_it(level3_run: Path) -> None:
    rules = [OpenAIReasoningRules(models={"o4-mini"})]
    with LoopbackServer(reasoning_judge(needs=3000), rules=rules) as judge:
        result = runner.invoke(
            app, ["score", str(level3_run), "--judge", f"openai:o4-mini@{judge.openai_base_url}"]
        )
        bodies = [request.body for request in judge.requests]
    assert result.exit_code == 0, result.output
    assert judge.rejections == []  # no max_tokens, no temperature: the model's own rules
    assert {body["max_completion_tokens"] for body in bodies} == {16384}
    assert {body["reasoning_effort"] for body in bodies} == {"low"}
    judged = _judgments(level3_run, "llm:")
    assert len(judged) == 2 and all(j["error"] is None for j in judged)
    assert {j["finish_reason"] for j in judged} == {"stop"} and all(
        j["usage"]["reasoning_tokens"] == 3000 for j in judged
    )
    assert {j["sent"]["max_tokens"] for j in judged} == {16384}
    scores = json.loads((level3_run / "scores.json").read_text())
    assert scores["run"]["n_judge_failed"] == 0
    assert scores["tasks"]["experimental_conclusion"]["score"] == pytest.approx(
        100 * 2 / _n_blanks(level3_run)
    )


def test_an_unknown_thinking_model_is_asked_again_with_more_room_and_a_hopeless_one_fails_with_exit_3(
    level3_run: Path,
) -> None:
    with LoopbackServer(reasoning_judge(needs=3000)) as judge:  # a vLLM server of a thinking model
        result = runner.invoke(
            app, ["score", str(level3_run), "--judge", f"openai:thinker@{judge.openai_base_url}"]
        )
        budgets = [request.body["max_tokens"] for request in judge.requests]
    assert result.exit_code == 0, result.output
    assert sorted(budgets) == [1024, 1024, 16384, 16384]  # cut once, then room: never three times the same

    with LoopbackServer(reasoning_judge(needs=10**6)) as hopeless:
        spec = f"openai:o4-mini@{hopeless.openai_base_url}"
        result = runner.invoke(app, ["score", str(level3_run), "--judge", spec])
        budgets = sorted(request.body["max_completion_tokens"] for request in hopeless.requests)
        allowed = runner.invoke(app, ["score", str(level3_run), "--judge", spec, "--allow-failures"])
    assert result.exit_code == 3, result.output  # as `expvid eval` exits
    assert "2 record(s) scored 0 without a model answer or a judgement" in result.output
    assert budgets[:4] == [16384, 16384, 65536, 65536]  # escalated to the cap, then a failure
    failed = _judgments(level3_run, "llm:")[-1]
    assert failed["error"].startswith(
        "the judge's reply was cut by its token limit of 65536 (finish_reason: length)"
    )
    assert failed["finish_reason"] == "length" and failed["verdicts"] is None
    assert allowed.exit_code == 0


def test_judge_replies_are_cached_per_server_and_score_can_ask_again(level3_run: Path) -> None:
    with LoopbackServer(Reply.ok("I would rather not say.")) as judge:
        spec = f"openai:phi-3-mini@{judge.openai_base_url}"
        broken = runner.invoke(app, ["score", str(level3_run), "--judge", spec])
        assert broken.exit_code == 3 and len(judge.requests) == 6  # three attempts per item
        judge.reset(lambda request: Reply.ok(_verdicts(request)))  # the server is fixed, same URL
        cached = runner.invoke(app, ["score", str(level3_run), "--judge", spec])
        assert cached.exit_code == 3 and len(judge.requests) == 0  # the broken replies, from the cache
        fresh = runner.invoke(app, ["score", str(level3_run), "--judge", spec, "--no-cache"])
        assert fresh.exit_code == 0, fresh.output
        assert len(judge.requests) == 2
    with LoopbackServer(lambda request: Reply.ok(_verdicts(request, right=lambda n: True))) as other:
        again = runner.invoke(
            app, ["score", str(level3_run), "--judge", f"openai:phi-3-mini@{other.openai_base_url}"]
        )
        assert again.exit_code == 0 and len(other.requests) == 2  # another server: asked, not replayed
    scores = json.loads((level3_run / "scores.json").read_text())
    assert scores["tasks"]["experimental_conclusion"]["score"] == 100.0


def test_the_papers_per_blank_protocol(level3_run: Path) -> None:
    with LoopbackServer(lambda request: Reply.ok(_verdicts(request))) as judge:
        spec = f"openai:phi-3-mini@{judge.openai_base_url}"
        result = runner.invoke(
            app, ["score", str(level3_run), "--judge", spec, "-S", "judge_protocol=per_blank"]
        )
        prompts = [request.texts[-1] for request in judge.requests]
    assert result.exit_code == 0, result.output
    n_blanks = _n_blanks(level3_run)
    assert len(prompts) == n_blanks and all(len(_BLANK.findall(prompt)) == 1 for prompt in prompts)
    judged = _judgments(level3_run, "llm-per-blank:")
    assert len(judged) == 2 and sum(j["n_requests"] for j in judged) == n_blanks
    assert all(j["verdicts"][0] and not any(j["verdicts"][1:]) for j in judged)
    manifest = json.loads((level3_run / "manifest.json").read_text())
    assert manifest["config"]["settings"]["suite_settings"] == {"judge_protocol": "per_blank"}
    assert manifest["judge"]["name"].startswith("llm-per-blank:")
    wrong = runner.invoke(app, ["score", str(level3_run), "--judge", spec, "-S", "judge_protocol=both"])
    assert wrong.exit_code == 2 and "judge_protocol" in wrong.output and "per_blank" in wrong.output
