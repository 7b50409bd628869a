"""SciVideoBench end to end: offline baseline and loopback model, strict vs official, Table 2, pass@k."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate
from expvid.run.generate import item_seed
from expvid.run.report import build_table, load_runs, to_markdown
from expvid.suites.registry import get_suite


def run(data: Path, model: str, out: Path, cache: Path, **overrides: Any) -> EvalResult:
    config = EvalConfig(
        suite="scivideobench", data=data, model=model, out=out, cache_dir=cache, cache_responses=False, n_bootstrap=20,
        **overrides,
    )  # fmt: skip
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def test_offline_baseline(svb_sample, tmp_path, cache_dir) -> None:
    result = run(svb_sample, "random", tmp_path / "run", cache_dir)
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert set(scores["tasks"]) == {"conceptual", "hypothetical", "quantitative"}
    assert scores["levels"]["Overall"]["n"] == 12 and result.failed == 0
    assert set(scores["disciplines"]) == {"Biology", "Chemistry", "Medicine", "Physics"}
    official = scores["extraction_modes"]["official"]
    assert official["differs"] == [] and official["n_fallback"] == 0  # "\boxed{C}" reads the same both ways
    assert official["levels"]["Overall"]["score"] == scores["levels"]["Overall"]["score"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["samplers"]["conceptual"]["num_frames"] == 32
    assert (
        manifest["config"]["generation"]["max_tokens"] == 16
        and manifest["config"]["generation"]["temperature"] == 0
    )


def test_loopback_model_strict_and_official_side_by_side(
    svb_sample, tmp_path, cache_dir, model_server
) -> None:
    run(svb_sample, f"openai:loopback@{model_server.openai_base_url}", tmp_path / "run", cache_dir)
    assert len(model_server.requests) == 12
    for request in model_server.requests:
        assert (
            request.n_images == 32 and request.body["max_tokens"] == 16 and request.body["temperature"] == 0
        )
        assert "jove_" not in json.dumps(request.body) and "0:04" not in request.texts[-1]
    assert any(t.startswith("Between frame 4 to frame 9") for r in model_server.requests for t in r.texts)

    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    # strict reads "B" (right for 2 of the 12 questions); the official rule reads "I" (right for 1)
    assert scores["levels"]["Overall"]["score"] == pytest.approx(100 * 2 / 12)
    official = scores["extraction_modes"]["official"]
    assert official["levels"]["Overall"]["score"] == pytest.approx(100 * 1 / 12)
    assert len(official["differs"]) == 12
    first = next(d for d in official["differs"] if d["item_id"] == "10003/2/hypothetical")
    assert (first["headline"], first["mode"], first["headline_correct"], first["mode_correct"]) == (
        "B",
        "I",
        False,
        True,
    )

    table = build_table(
        get_suite("scivideobench"), load_runs([tmp_path / "run"]), references=["Gemini-2.5-Pro"]
    )
    text = to_markdown(table)
    header = text.splitlines()[0]
    for column in (
        "Overall",
        "Conceptual",
        "Hypothetical",
        "Quantitative",
        "Biology",
        "Chemistry",
        "Medicine",
        "Physics",
    ):
        assert column in header
    assert (
        "[official extraction]" in text
        and "| _Gemini-2.5-Pro (paper)_ | 64.30 | 69.73 | 67.79 | 50.61 |" in text
    )
    assert "reads 12 reply(ies) differently from the strict extraction" in text


def test_cot_variant_keep_times_and_a_frame_preset(svb_sample, tmp_path, cache_dir, model_server) -> None:
    preset = get_suite("scivideobench").frame_preset("gemini")  # type: ignore[attr-defined]
    run(
        svb_sample,
        f"openai:loopback@{model_server.openai_base_url}",
        tmp_path / "run",
        cache_dir,
        tasks=["conceptual"],
        frames=preset,
        suite_settings={"cot": True, "keep_times": True},
    )
    requests = model_server.requests
    assert len(requests) == 5 and all(r.body["max_tokens"] == 1024 for r in requests)
    assert {r.n_images for r in requests} == {25, 20, 16}  # 1 fps over 25 s, 20 s and 16 s videos
    texts = [r.texts[-1] for r in requests]
    # the task's own post_prompt_cot, in place of the post prompt
    assert all(
        t.endswith(
            "“Therefore, the final answer is: $LETTER” (without quotes), where $LETTER is one of the options. Think step by step before answering."
        )
        for t in texts
    )
    assert any(t.startswith("Between 0:04-0:09 the researcher") for t in texts)  # times kept as written
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["tasks"]["conceptual"]["n_unparseable"] == 0  # "Therefore, the final answer is: A"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (
        manifest["samplers"]["conceptual"]["strategy"] == "fps"
        and manifest["samplers"]["conceptual"]["fps"] == 1.0
    )


def test_samples_and_pass_at_k(svb_sample, tmp_path, cache_dir) -> None:
    # Seeds are per (item, sample): the stand-in model answers A, B, C for samples 0, 1, 2.
    items = get_suite("scivideobench").load(svb_sample).items
    sample_of = {item_seed(0, item.id, s): s for item in items for s in range(3)}

    def by_seed(request: RecordedRequest) -> Reply:
        return Reply.ok(f"The answer is {'ABC'[sample_of[request.body['seed']]]}")

    with LoopbackServer(by_seed) as server:
        model = f"openai:loopback@{server.openai_base_url}"
        run(svb_sample, model, tmp_path / "run", cache_dir, samples=3, temperature=0.7)
        assert sorted(sample_of[r.body["seed"]] for r in server.requests) == [0] * 12 + [1] * 12 + [2] * 12
        again = run(svb_sample, model, tmp_path / "run", cache_dir, samples=3, temperature=0.7)
        assert again.generated == 0 and again.resumed == 36 and len(server.requests) == 36
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    # five questions have gold A, B or C: each is right in exactly one of its three samples
    curve = scores["pass_at_k"]["overall"]
    assert curve["1"] == pytest.approx(100 * 5 / 36)
    assert curve["2"] == pytest.approx(100 * 5 * (2 / 3) / 12)
    assert curve["3"] == pytest.approx(100 * 5 / 12)
    assert scores["levels"]["Overall"]["score"] == pytest.approx(
        100 * 1 / 12
    )  # the headline is sample 0 ("A")
    assert scores["run"]["samples"] == 3
    assert len((tmp_path / "run" / "item_scores.jsonl").read_text().splitlines()) == 12
    samples = [
        json.loads(line) for line in (tmp_path / "run" / "sample_scores.jsonl").read_text().splitlines()
    ]
    assert len(samples) == 36 and {s["sample"] for s in samples} == {0, 1, 2}
