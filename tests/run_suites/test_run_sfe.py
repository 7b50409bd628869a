"""SFE end to end in both languages: loopback model and 0-10 judge, IoU, BERTScore, Tables 3 and 4."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from expvid.fakes.models.server import LoopbackServer, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.suites.registry import get_suite

#: judge score per item of one language (conftest.judge_reply scores by gold answer; the model says
#: "A" to both multiple-choice questions, "6" to every exact-match question)
JUDGE = {"A001": 10, "A010": 5, "C001": 9, "C004": 5, "L001": 5, "M001": 0, "M010": 5}


def run(data: Path, model: str, out: Path, **overrides: Any) -> EvalResult:
    config = EvalConfig(
        suite="sfe", data=data, model=model, out=out, cache_dir=None, n_bootstrap=20,
        suite_settings={"language": "both", "bertscore": "minilm"}, **overrides,
    )  # fmt: skip
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def test_loopback_model_and_judge(sfe_sample, tmp_path, model_server, judge_server) -> None:
    run(sfe_sample, f"openai:loopback@{model_server.openai_base_url}", tmp_path / "run",
        judge=f"openai:gpt-4o-2024-11-20@{judge_server.openai_base_url}")  # fmt: skip
    assert len(model_server.requests) == 18
    images = sorted(r.n_images for r in model_server.requests)
    assert images == [1] * 16 + [2] * 2  # L001 has two images, in both languages
    assert all(r.body["max_tokens"] == 1024 and r.body["temperature"] == 0 for r in model_server.requests)
    assert len(judge_server.requests) == 14  # every item but the four box items
    assert all(r.n_images == 0 and r.roles == ["system", "user"] for r in judge_server.requests)
    assert all(r.body["max_tokens"] == 20 for r in judge_server.requests)  # the official judge call

    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    average = sum(JUDGE.values()) / len(JUDGE) * 10
    assert scores["levels"]["Average"]["score"] == pytest.approx(average)
    assert scores["tasks"]["mcq"]["score"] == pytest.approx(50.0)
    assert scores["tasks"]["exact_match"]["score"] == pytest.approx((5 + 9 + 5) / 3 * 10)
    assert scores["tasks"]["grounding"]["score"] == pytest.approx(50.0)  # E011 exact, E012 missed
    metrics = scores["metrics"]
    assert metrics["exec_success"]["score"] == 100.0 and metrics["iou_parsed_only"]["score"] == pytest.approx(
        50.0
    )
    # E012: the first written box overlaps no gold box, so the official order-bound matching scores 0 where
    # the best-pair matching finds the small overlap of the second box (IoU 0.005 / 0.13)
    assert metrics["iou_best_pair"]["score"] == pytest.approx((100 + 100 * 0.005 / 0.13) / 2)
    assert metrics["bertscore_f1"]["n"] == 4 and 0 < metrics["bertscore_f1"]["score"] < 1
    assert metrics["llm_score_official_parse"]["score"] == pytest.approx(average)
    # acc@t as the official aggregation computes it: over all 18 items (E011 en/zh hit, IoU 1.0);
    # box_acc@t over the 4 box items
    for threshold in ("0.1", "0.3", "0.5", "0.7", "0.9"):
        assert metrics[f"acc@{threshold}"]["score"] == pytest.approx(100 * 2 / 18)
        assert metrics[f"acc@{threshold}"]["n"] == 18
        assert metrics[f"box_acc@{threshold}"]["score"] == pytest.approx(50.0)
    # §3.2 names no level for E012 (A010's record carries its own): 8 of the 9 tasks are in L columns
    assert metrics["level_covered"]["score"] == pytest.approx(100 * 16 / 18)
    coverage = scores["metric_settings"]["level_coverage"]["en"]
    assert coverage == {"tasks": 9, "tasks_with_level": 8, "items": 9, "items_with_level": 8}
    assert scores["metric_settings"]["judge_input"] == "raw"
    assert any(
        "L1-L3 (partial)" in note and "8 of 9 tasks, 8 of 9 items" in note for note in scores["run"]["notes"]
    )
    assert scores["metric_settings"]["bertscore"]["which"] == "minilm"
    assert any(
        "BERTScore used sentence-transformers/all-MiniLM-L6-v2" in note for note in scores["run"]["notes"]
    )

    breakdowns = scores["breakdowns"]
    assert breakdowns["language"]["zh"]["levels"]["Average"]["score"] == pytest.approx(average)
    assert breakdowns["discipline_language"]["Astronomy|en"]["levels"]["Average"]["score"] == pytest.approx(
        75.0
    )
    assert breakdowns["discipline_language"]["Material|zh"]["levels"]["Average"]["score"] == pytest.approx(
        25.0
    )
    assert "Average" not in breakdowns["discipline_language"]["Earth|en"]["levels"]  # box items only
    l1 = [JUDGE[t] for t in ("A001", "C001", "C004", "L001", "M001")]
    assert breakdowns["level_language"]["L1|en"]["levels"]["Average"]["score"] == pytest.approx(
        sum(l1) / 5 * 10
    )
    assert breakdowns["language"]["en"]["metrics"]["bertscore_f1"]["n"] == 2

    text = to_markdown(build_table(get_suite("sfe"), load_runs([tmp_path / "run"]), references=["GPT-o3"]))
    lines = text.splitlines()
    header = lines[0]
    for column in (
        "Avg. en",
        "Avg. zh",
        "Astronomy en",
        "L1 zh (partial)",
        "items in L1-L3 % en",
        "EM IoU en",
        "EM IoU en (unparseable = 0)",
        "Open BERTScore zh",
        "MCQ LLM en",
    ):
        assert column in header
    row = next(line for line in lines if line.startswith("| **loopback"))  # the model's name, not its spec
    cells = dict(zip(header.split(" | "), row.split(" | "), strict=True))
    # two decimals as Tables 3 and 4 print them
    assert cells["Avg. en"] == f"{average:.2f}" and cells["EM IoU zh"] == "50.00" and cells["Earth en"] == "–"
    assert cells["EM IoU zh (unparseable = 0)"] == "50.00" and cells["items in L1-L3 % en"] == "88.9"
    assert len(cells["Open BERTScore en"].split(".")[1]) == 3  # 0-1, three decimals as Table 4
    assert "| _GPT-o3 (paper)_ | 34.08 | 31.60 |" in text


def test_judge_failures_are_counted_not_hidden(sfe_sample, tmp_path, model_server) -> None:
    with LoopbackServer(Reply.ok("I would rate this answer fairly highly.")) as judge:
        run(sfe_sample, f"openai:loopback@{model_server.openai_base_url}", tmp_path / "run",
            judge=f"openai:judge@{judge.openai_base_url}", tasks=["mcq", "exact_match"])  # fmt: skip
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["levels"]["Average"]["n_judge_failed"] == 10 and scores["levels"]["Average"]["score"] == 0.0
    assert scores["levels"]["Average"]["n_unparseable"] == 0  # the model answered; its judge did not
    # what the official aggregation would have printed: no digits -> silently 0
    assert scores["metrics"]["llm_score_official_parse"]["score"] == 0.0
    judgments = [json.loads(line) for line in (tmp_path / "run" / "judgments.jsonl").read_text().splitlines()]
    assert len(judgments) == 10 and all("unparseable judge" in j["error"] for j in judgments)


def test_offline_baseline(sfe_sample, tmp_path) -> None:
    result = run(sfe_sample, "random", tmp_path / "run")
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert result.failed == 0 and scores["levels"]["Average"]["n"] == 14
    # a chance baseline: every box question gets the gold boxes of the other box task of its language
    # (E011 and E012 have one question each), which overlap E011's second box a little and E012 not
    assert scores["tasks"]["grounding"]["n_unparseable"] == 0
    assert scores["metrics"]["exec_success"]["score"] == 100.0
    assert scores["tasks"]["grounding"]["score"] == pytest.approx(100 * (0.005 / 0.13 / 2 + 0.0) / 2)
    # exact-match questions get another one's answer (-35, 6, 12 are all different): no match
    assert (
        scores["tasks"]["exact_match"]["score"] == 0.0
        and scores["tasks"]["exact_match"]["n_unparseable"] == 0
    )
    predictions = [
        json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    e011 = next(p for p in predictions if p["item_id"] == "en/E011/0005")
    assert e011["response"] == "[0.40,0.40,0.60,0.70]"  # E012's gold, never its own
    assert scores["run"]["judge"]["offline"] is True and any("OFFLINE" in n for n in scores["run"]["notes"])
