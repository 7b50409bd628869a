"""ProMQA end to end: loopback model and loopback ternary judge, breakdowns, agreement; offline run."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from expvid.media.plan import keep_last_pick
from expvid.media.synth import read_frame_code
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.run.rescore import JudgeChoice, rescore_run
from expvid.suites.promqa.sample import EXAMPLES, FPS
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import get_suite

#: judge decisions of conftest.judge_reply, by question
JUDGED = {"What should I do next?": 2, "Did I skip any step so far?": 1}
FAILING = "Was the microwave power right?"


def run(data: Path, model: str, out: Path, cache: Path, **overrides: Any) -> EvalResult:
    config = EvalConfig(
        suite="promqa", data=data, model=model, out=out, cache_dir=cache, cache_responses=False, n_bootstrap=20,
        **overrides,
    )  # fmt: skip
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def _seconds(clock: str) -> int:
    hours, minutes, seconds = (int(part) for part in clock.split(":"))
    return 3600 * hours + 60 * minutes + seconds


def test_loopback_model_and_judge(promqa_sample, tmp_path, cache_dir, model_server, judge_server) -> None:
    human = tmp_path / "human.jsonl"
    human.write_text(
        '{"id": "1_10_1_next", "score": 2}\n{"id": "1_10_2_missing", "score": 2}\n{"id": "2_20_2_technique", "score": 0}\n'
    )
    run(
        promqa_sample,
        f"openai:loopback@{model_server.openai_base_url}",
        tmp_path / "run",
        cache_dir,
        frames=FrameOptions(max_frames=7),
        judge=f"openai:gpt-4o-2024-08-06@{judge_server.openai_base_url}",
        suite_settings={"human_judgments": human},
    )
    # the model: text first, then the frames of 0..end_time at 1 fps, thinned from the end, last kept
    ends = {f"{entry[0]}_{entry[1]}_{entry[3]}": _seconds(entry[2]) for entry in EXAMPLES}
    predictions = {
        json.loads(line)["meta"]["prompt"]: json.loads(line)
        for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    }
    assert len(model_server.requests) == 10
    for request in model_server.requests:
        content = request.body["messages"][0]["content"]
        assert content[0]["type"] == "text" and all(part["type"] == "image_url" for part in content[1:])
        prediction = predictions[request.texts[0]]
        end = ends[prediction["item_id"]]
        codes = [
            read_frame_code(np.asarray(Image.open(io.BytesIO(d)).convert("RGB"))) for d in request.images
        ]
        assert codes == [FPS * second for second in keep_last_pick(end, 7)] and codes[-1] == FPS * (end - 1)
        assert request.body["temperature"] == 0 and request.body["max_tokens"] == 128

    # the judge: text only, every performed step with its error tags
    assert len(judge_server.requests) == 10 and all(r.n_images == 0 for r in judge_server.requests)
    assert any(
        "    - [Measurement Error] Added a tablespoon instead of a teaspoon" in r.texts[0]
        for r in judge_server.requests
    )

    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    decided = [JUDGED.get(entry[8], 0) for entry in EXAMPLES if entry[8] != FAILING]
    assert scores["levels"]["Avg"]["score"] == pytest.approx(sum(decided) / 10 * 50)  # the failure scores 0
    assert scores["levels"]["Avg"]["n_judge_failed"] == 1
    assert scores["tasks"]["temperature"]["n_judge_failed"] == 1 and scores["tasks"]["next"][
        "score"
    ] == pytest.approx(50)
    breakdowns = scores["breakdowns"]
    assert set(breakdowns["error"]) == {"clean", "noisy"} and set(breakdowns["answer_source"]) == {
        "machine",
        "human",
        "both",
    }
    assert (
        breakdowns["error"]["clean"]["levels"]["Avg"]["n"] == 6
        and breakdowns["error"]["noisy"]["levels"]["Avg"]["n"] == 4
    )
    agreement = scores["agreement"]
    assert agreement["n"] == 3 and agreement["accuracy"] == pytest.approx(2 / 3)  # 2=2, 1!=2, 0=0
    assert agreement["pearson"] == pytest.approx(0.866, abs=1e-3)
    assert scores["run"]["judge"]["offline"] is False and not any(
        "OFFLINE" in n for n in scores["run"]["notes"]
    )

    text = to_markdown(build_table(get_suite("promqa"), load_runs([tmp_path / "run"]), references=["GPT-4o"]))
    header = text.splitlines()[0]
    for column in ("Avg.", "clean", "noisy", "missing", "timing", "machine", "human", "both"):
        assert column in header
    assert "| _GPT-4o (50f, 765p) (paper)_ | 40.4 | 39.5 | 41.1 |" in text
    assert "judge vs human judgements (3 items): Pearson 0.866, accuracy 0.667" in text


def test_rescoring_with_another_judge_rejudges(
    promqa_sample, tmp_path, cache_dir, model_server, judge_server
) -> None:
    run(promqa_sample, f"openai:loopback@{model_server.openai_base_url}", tmp_path / "run", cache_dir)
    offline = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert offline["run"]["judge"]["offline"] is True and any("OFFLINE" in n for n in offline["run"]["notes"])
    scores = asyncio.run(
        rescore_run(
            tmp_path / "run",
            judge=JudgeChoice(spec=f"openai:judge@{judge_server.openai_base_url}"),
            show_progress=False,
        )
    )
    assert len(judge_server.requests) == 10 and scores.run.judge is not None and not scores.run.judge.offline
    assert len(model_server.requests) == 10  # the model is never asked again


def test_offline_baseline(promqa_sample, tmp_path, cache_dir) -> None:
    result = run(promqa_sample, "random", tmp_path / "run", cache_dir)
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert result.failed == 0 and scores["levels"]["Avg"]["n"] == 10
    assert scores["levels"]["Avg"]["score"] == 0.0  # "cannot answer" matches no gold answer
    assert scores["run"]["judge"]["name"] == "promqa-ternary:offline-minilm"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    sampler = manifest["samplers"]["next"]
    assert (sampler["strategy"], sampler["fps"], sampler["max_frames"]) == ("fps_keep_last", 1.0, 50)


def test_random_is_a_chance_baseline_judged_like_a_model(
    promqa_sample, tmp_path, cache_dir, judge_server
) -> None:
    """Every question gets the gold answer of another question of its type, and is judged."""
    run(promqa_sample, "random", tmp_path / "run", cache_dir, samples=3,
        judge=f"openai:gpt-4o-2024-08-06@{judge_server.openai_base_url}")  # fmt: skip
    predictions = [
        json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    suite = get_suite("promqa")
    dataset = suite.load(promqa_sample)
    gold = {item.id: set(item.answer) for item in dataset.items}  # type: ignore[arg-type]
    for prediction in predictions:
        item = dataset.get(prediction["item_id"])
        others = {
            a
            for other in dataset.items
            if other.task == item.task and other.id != item.id
            for a in other.answer
        }  # type: ignore[union-attr]
        if others:
            assert prediction["response"] in others and prediction["response"] not in gold[item.id] - others
        else:
            assert "cannot answer" in prediction["response"]
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["levels"]["Avg"]["n"] == len(dataset.items) and scores["pass_at_k"]["n_samples"] == 3
    answered = [p for p in predictions if "cannot answer" not in p["response"]]
    assert answered and len(judge_server.requests) >= len(answered)  # judged, never assumed 0
