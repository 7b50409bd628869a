"""Judges (and SFE's BERTScore) see the reply as the official code sends it: raw, think blocks and all.

`-S judge_input=stripped` shows them the reply without its reasoning instead (for reasoning
models); the choice is recorded in the manifest and the judge's identity, so changing it on
`expvid score` judges every answer again.
"""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.scoring.bertscore import BertScorer
from expvid.suites.registry import get_suite

runner = CliRunner()
THOUGHT = "<think>The mug was cold, so it needs heat.</think>"
ANSWER = "You should microwave the mug of milk for 30 seconds."


def thinking_model(request: RecordedRequest) -> Reply:
    return Reply.ok(f"{THOUGHT}\n{ANSWER}")


def ternary_judge(request: RecordedRequest) -> Reply:
    return Reply.ok("[Rationale] Same step.\n[Judge] 2")


def _predicted(prompt: str) -> str:
    match = re.search(r"\[Predicted Answer\]\n(.*?)\n\n## Feedback", prompt, re.DOTALL)
    assert match, prompt
    return match.group(1)


def test_promqa_judge_reads_the_raw_reply_then_stripped_on_rescore(promqa_sample, tmp_path, plain) -> None:
    out = tmp_path / "run"
    with LoopbackServer(thinking_model) as model, LoopbackServer(ternary_judge) as judge:
        spec = f"openai:gpt-4o-2024-08-06@{judge.openai_base_url}"
        args = ["eval", "--suite", "promqa", "--data", str(promqa_sample), "--out", str(out), "--no-cache",
                "--quiet", "--max-frames", "2", "--tasks", "next", "--judge", spec,
                "--model", f"openai:loopback@{model.openai_base_url}"]  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        first = len(judge.requests)
        assert first >= 1
        assert all(_predicted(r.texts[0]) == f"- {THOUGHT}\n{ANSWER}" for r in judge.requests)  # official
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["config"]["suite_settings"]["judge_input"] == "raw"  # the suite default
        assert "judge_input" not in manifest["config"]["identity"]["suite_settings"]  # scoring only

        again = runner.invoke(
            app, ["score", str(out), "--judge", spec, "-S", "judge_input=stripped", "--quiet"]
        )
        assert again.exit_code == 0, again.output
        stripped = judge.requests[first:]
        assert len(stripped) == first  # a new judge identity: every answer judged again
        assert all(_predicted(r.texts[0]) == f"- {ANSWER}" for r in stripped)
        assert "judge input: stripped" in plain(again.output)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["config"]["suite_settings"]["judge_input"] == "stripped"
        judgments = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
        assert len(judgments) == 2 * first

        same = runner.invoke(
            app, ["score", str(out), "--judge", spec, "--judge-input", "stripped", "--quiet"]
        )
        assert same.exit_code == 0 and len(judge.requests) == 2 * first  # reused: same judge, same input
        assert "--judge-input is deprecated" in plain(same.output)  # the old flag, for one release

        asked = runner.invoke(app, ["score", str(out), "-S", "frame_preset=gpt-4o", "--quiet"])
        assert asked.exit_code == 2 and "-S frame_preset changes what the model was asked" in plain(
            asked.output
        )


def test_sfe_bertscore_and_judge_follow_the_judge_input(sfe_sample) -> None:
    raw_suite = get_suite("sfe", {"bertscore": "minilm"})
    stripped_suite = get_suite("sfe", {"bertscore": "minilm", "judge_input": "stripped"})
    dataset = raw_suite.load(sfe_sample)
    stripped_suite.load(sfe_sample)
    item = next(i for i in dataset.items if i.task == "open_ended")
    answer = str(item.meta["answer_raw"])
    response = f"<think>Let me look at the ring.</think>{answer}"
    extraction = raw_suite.extract(response, item)
    raw = raw_suite.extra_metrics([(item, extraction, None, response)])[item.id]["bertscore_f1"]  # type: ignore[attr-defined]
    clean = stripped_suite.extra_metrics([(item, extraction, None, response)])[item.id]["bertscore_f1"]  # type: ignore[attr-defined]
    scorer = BertScorer("minilm")
    assert clean is not None and clean > 0.99  # the answer itself
    assert raw == scorer.score(response, answer).f1 and raw < clean  # the official call: the raw reply
    assert stripped_suite.metric_settings()["judge_input"] == "stripped"  # type: ignore[attr-defined]
    assert any("-S judge_input=stripped" in note for note in stripped_suite.score_notes())  # type: ignore[attr-defined]


def test_judge_input_does_not_apply_to_a_suite_without_a_judge(svb_sample, tmp_path, plain) -> None:
    result = runner.invoke(
        app,
        ["eval", "--suite", "scivideobench", "--data", str(svb_sample), "--model", "random", "--out",
         str(tmp_path / "run"), "-S", "judge_input=stripped", "--no-cache", "--quiet"],
    )  # fmt: skip
    assert result.exit_code != 0 and "unknown scivideobench setting 'judge_input'" in plain(result.output)
    bad = runner.invoke(
        app,
        ["eval", "--suite", "sfe", "--data", str(svb_sample), "--model", "random", "--out",
         str(tmp_path / "run"), "-S", "judge_input=thoughts"],
    )  # fmt: skip
    assert bad.exit_code == 2 and "sfe setting judge_input='thoughts'" in plain(bad.output)
    assert "'raw' or 'stripped'" in plain(bad.output)
