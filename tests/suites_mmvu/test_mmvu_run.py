"""MMVU end to end: a real loopback model and a GPT-4o-style judge behind real HTTP, the paper's judge
prompts on the wire, every answer judged, unreadable judge replies counted, frames by linspace."""

from __future__ import annotations

import asyncio
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate

GOLD = {"validation_0": "A", "validation_2": "C", "validation_4": "D", "validation_6": "C",
        "validation_1": "Carbon dioxide", "validation_3": "14", "validation_5": "Dolly Zoom",
        "validation_7": "Misrepresentation"}  # fmt: skip


def model(request: RecordedRequest) -> Reply:
    text = request.texts[-1]
    if "multiple-choice question step by step" in text:
        return Reply.ok(
            "<think>The precipitate is calcium carbonate.</think>Step 1 ... Therefore, the final answer is: A"
        )
    if "Question: Which gas" in text:
        return Reply.ok("It bubbles CO2. Therefore, the final answer is: 'Answer: carbon dioxide'")
    return Reply.ok("Therefore, the final answer is: 'Answer: I cannot tell'")


def judge(request: RecordedRequest) -> Reply:
    user = request.texts[-1]
    gold = re.search(r"Ground Truth Answer: (.*)\n", user)
    if gold and gold.group(1) == "Dolly Zoom":
        return Reply.ok("The response seems fine to me.")  # no verdict: a judge failure, never a zero
    said = "A" if "final answer is: A" in user else "carbon dioxide" if "carbon dioxide" in user else "none"
    correct = bool(gold) and said.lower() == gold.group(1).lower()  # type: ignore[union-attr]
    return Reply.ok(json.dumps({"extracted_answer": said, "correct": correct}))


def _run(data: Path, out: Path, model_url: str, judge_url: str, **settings: Any) -> None:
    config = EvalConfig(
        suite="mmvu", data=data, model=f"openai:loopback@{model_url}", out=out, cache_dir=None,
        judge=f"openai:gpt-4o@{judge_url}", n_bootstrap=20, frames={"counts": {"all": 4}}, suite_settings=settings,
    )  # fmt: skip
    asyncio.run(evaluate(config, command=["test"], show_progress=False))


def test_every_answer_is_judged_with_the_papers_prompts(mmvu_dir, tmp_path) -> None:
    out = tmp_path / "run"
    with LoopbackServer(model) as served, LoopbackServer(judge) as judged:
        _run(mmvu_dir, out, served.openai_base_url, judged.openai_base_url)
        assert len(served.requests) == 8 and len(judged.requests) == 8  # multiple choice judged too
        prompts = resources.files("expvid.suites.mmvu").joinpath("prompts")
        for request in judged.requests:
            messages = request.body["messages"]
            kind = "multiple_choice" if "\n\nOptions:\n" in messages[1]["content"] else "open_ended"
            assert messages[0] == {
                "role": "system",
                "content": prompts.joinpath(f"judge_{kind}.system.txt").read_text(),
            }
            assert request.body["max_tokens"] == 128 and request.body["temperature"] == 0.0
        first = next(r for r in judged.requests if "2.24 liters" in r.texts[-1]).texts[-1]
        assert (
            first.startswith("Question: Assume that 2.24 liters")
            and "\n\nOptions:\nA: 10.0\nB: 5.0\n" in first
        )
        assert "\n\nGround Truth Answer: A\n\nModel Response to the Question: <think>" in first  # raw reply

        scores = json.loads((out / "scores.json").read_text())
        assert scores["tasks"]["multiple_choice"]["score"] == 25.0  # "A" is right once in four
        assert (
            scores["tasks"]["open_ended"]["score"] == 25.0
            and scores["tasks"]["open_ended"]["n_judge_failed"] == 1
        )
        assert scores["metrics"]["mc_strict"]["score"] == 25.0  # the strict letter reading agrees here
        manifest = json.loads((out / "manifest.json").read_text())
        assert (
            manifest["judge"]["model"] == "gpt-4o"
            and "judge_multiple_choice" not in manifest["judge"]["prompt"]
        )
        assert manifest["config"]["generation"]["temperature"] == 1.0
        predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
        chemistry = next(p for p in predictions if p["item_id"] == "validation_0")
        assert [f["index"] for f in chemistry["frames"]] == [0, 7, 15, 23]  # linspace(0, 23, 4): both ends

        # The official code's judge temperature, on re-scoring: a new judge identity, every answer again.
        result = CliRunner().invoke(
            app, ["score", str(out), "--judge", f"openai:gpt-4o@{judged.openai_base_url}",
                  "-S", "judge_temperature=1.0", "--quiet"],
        )  # fmt: skip
        # The judge still gives one item no verdict: exit 3, as `expvid eval` would (scores written).
        assert result.exit_code == 3, result.output
        assert "1 record(s) scored 0 without a model answer or a judgement" in " ".join(result.output.split())
        assert len(judged.requests) == 16 and all(r.body["temperature"] == 1.0 for r in judged.requests[8:])


def test_strict_sampling_and_the_offline_judge(mmvu_dir, tmp_path) -> None:
    out = tmp_path / "offline"
    with LoopbackServer(model) as served:
        config = EvalConfig(
            suite="mmvu", data=mmvu_dir, model=f"openai:loopback@{served.openai_base_url}", out=out,
            cache_dir=None, n_bootstrap=20, frames={"counts": {"all": 4}}, suite_settings={"sampling": "strict"},
        )  # fmt: skip
        asyncio.run(evaluate(config, command=["test"], show_progress=False))
    scores = json.loads((out / "scores.json").read_text())
    assert scores["tasks"]["open_ended"]["score"] == 25.0  # "carbon dioxide" = "Carbon dioxide", normalised
    assert scores["tasks"]["multiple_choice"]["score"] == 25.0  # the letter read strictly
    assert any("judged OFFLINE" in note for note in scores["run"]["notes"])
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    chemistry = next(p for p in predictions if p["item_id"] == "validation_0")
    assert [f["index"] for f in chemistry["frames"]] == [3, 9, 15, 21]  # midpoints of 4 segments of 24 frames
