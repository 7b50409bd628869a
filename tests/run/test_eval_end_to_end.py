"""`expvid eval` end to end against a real loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from expvid.fakes.models.server import LoopbackServer
from expvid.media.synth import read_frame_code
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.suites.protocol import FrameOptions
from expvid.suites.sample import read_truth

TASKS = ["tools", "sequence_generation", "step_prediction", "experimental_conclusion"]


def run_eval(sample_dir: Path, server: LoopbackServer, out: Path, cache: Path, **overrides: object):
    config = EvalConfig(
        data=sample_dir,
        model=f"openai:loopback@{server.openai_base_url}",
        out=out,
        tasks=overrides.pop("tasks", TASKS),  # type: ignore[arg-type]
        limit=overrides.pop("limit", 3),  # type: ignore[arg-type]
        frames=overrides.pop("frames", FrameOptions(counts={"L3": 12})),  # type: ignore[arg-type]
        cache_dir=cache,
        n_bootstrap=50,
        **overrides,  # type: ignore[arg-type]
    )
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def test_run_directory_is_self_describing(sample_dir, model_server, tmp_path, frame_cache_dir):
    result = run_eval(sample_dir, model_server, tmp_path / "run", frame_cache_dir)
    run = tmp_path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["model"].startswith("openai:loopback@")
    assert manifest["dataset_fingerprint"] == result.scores.run.dataset_fingerprint
    assert manifest["samplers"]["tools"]["num_frames"] == 8  # F.2: 8 frames for Level 1
    assert manifest["samplers"]["sequence_generation"]["num_frames"] == 32  # F.2: 32 for Level 2
    assert manifest["samplers"]["experimental_conclusion"]["num_frames"] == 12
    assert manifest["samplers"]["tools"]["size"] == 224
    generation = manifest["config"]["generation"]
    assert {k: generation[k] for k in ("temperature", "max_tokens", "source")} == {
        "temperature": 0.1,
        "max_tokens": 8192,
        "source": "ExpVid appendix F.2",
    }
    assert generation["paper"] == {"temperature": 0.1, "max_tokens": 8192, "source": "ExpVid appendix F.2"}
    assert generation["input_mode"] == "images"
    sent = manifest["config"]["sent"]  # what really went out, counted over the run
    assert sent["requests"] == 12 and sent["values"]["temperature"] == {"0.1": 12}
    assert sent["values"]["token_limit_field"] == {"max_tokens": 12}
    assert manifest["judge"]["offline"] is True
    assert "av" in manifest["versions"]

    predictions = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 12 and len({p["item_id"] for p in predictions}) == 12
    for prediction in predictions:
        assert prediction["error"] is None
        assert prediction["response"]
        assert prediction["meta"]["prompt"].startswith("Solve the")
        expected = {"tools": 8, "sequence_generation": 32, "step_prediction": 32}.get(prediction["task"], 12)
        assert prediction["n_images"] == len(prediction["frames"]) == expected
        times = [f["time"] for f in prediction["frames"]]
        assert times == sorted(times)

    scores = json.loads((run / "scores.json").read_text())
    assert set(scores["tasks"]) == set(TASKS)
    assert scores["tasks"]["tools"]["n"] == 3
    assert scores["run"]["judge"]["offline"] is True
    assert any("OFFLINE" in note for note in scores["run"]["notes"])
    assert (run / "judgments.jsonl").read_text().count("\n") == 3  # one per Level-3 item
    assert result.generated == 12


def test_requests_carry_frames_in_time_order_and_never_a_path(
    sample_dir, model_server, tmp_path, frame_cache_dir
):
    run_eval(
        sample_dir, model_server, tmp_path / "run", frame_cache_dir, tasks=["tools", "video_verification"]
    )
    predictions = {
        json.loads(line)["meta"]["prompt"]: json.loads(line)
        for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    }
    assert len(model_server.requests) == 6
    for request in model_server.requests:
        body = json.dumps(request.body)
        for leak in (".mp4", "clip_", "removed_step", "videos/", str(sample_dir)):
            assert leak not in body, f"request leaks {leak!r}"
        codes = [
            read_frame_code(np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))
            for data in request.images
        ]
        assert codes == sorted(codes) and len(set(codes)) == len(codes)
        assert len(codes) == len(predictions[request.texts[-1]]["frames"])


def test_sent_frames_are_the_logged_frames(sample_dir, model_server, tmp_path, frame_cache_dir):
    """The frame codes the model received equal the source frames of the logged clip indices."""
    run_eval(sample_dir, model_server, tmp_path / "run", frame_cache_dir, tasks=["materials"], limit=2)
    truth = read_truth(sample_dir)["clips"]
    items = {}
    for line in (sample_dir / "annotations/level1/materials.jsonl").read_text().splitlines():
        record = json.loads(line)
        items[f"materials/{record['id']}"] = record
    by_prompt = {}
    for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines():
        prediction = json.loads(line)
        by_prompt[prediction["meta"]["prompt"]] = prediction
    for request in model_server.requests:
        prediction = by_prompt[request.texts[-1]]
        clip = truth[items[prediction["item_id"]]["video_path"]]
        ((first, _last),) = clip["ranges"]
        codes = [
            read_frame_code(np.asarray(Image.open(io.BytesIO(d)).convert("RGB"))) for d in request.images
        ]
        assert codes == [first + frame["index"] for frame in prediction["frames"]]


def test_narration_reaches_the_model_only_with_the_asr_ablation(
    sample_dir, model_server, tmp_path, frame_cache_dir
):
    records = [
        json.loads(line) for line in (sample_dir / "annotations/level1/tools.jsonl").read_text().splitlines()
    ]
    narrations = [r["asr_caption"] for r in records[:3] if r["asr_caption"]]
    assert narrations, "the sample should have narrated tools items"
    run_eval(sample_dir, model_server, tmp_path / "plain", frame_cache_dir, tasks=["tools"])
    plain = " ".join(t for r in model_server.requests for t in r.texts)
    assert not any(n in plain for n in narrations)
    model_server.reset()
    run_eval(
        sample_dir,
        model_server,
        tmp_path / "asr",
        frame_cache_dir,
        tasks=["tools"],
        suite_settings={"with_asr": True},
    )
    with_asr = " ".join(t for r in model_server.requests for t in r.texts)
    assert all(n in with_asr for n in narrations)


def test_resume_refuses_other_settings(sample_dir, model_server, tmp_path, frame_cache_dir):
    from expvid.schema import DataError

    run_eval(sample_dir, model_server, tmp_path / "run", frame_cache_dir, tasks=["tools"], limit=1)
    with pytest.raises(DataError, match="frames"):
        run_eval(
            sample_dir,
            model_server,
            tmp_path / "run",
            frame_cache_dir,
            tasks=["tools"],
            limit=1,
            frames=FrameOptions(counts={"L1": 4}),
        )


def test_resume_extends_a_run_without_asking_again(sample_dir, model_server, tmp_path, frame_cache_dir):
    run_eval(sample_dir, model_server, tmp_path / "run", frame_cache_dir, tasks=["tools"], limit=2)
    first = len(model_server.requests)
    result = run_eval(sample_dir, model_server, tmp_path / "run", frame_cache_dir, tasks=["tools"], limit=4)
    assert result.resumed == 2 and result.generated == 2
    assert len(model_server.requests) == first + 2
    lines = (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 4 and len({json.loads(line)["item_id"] for line in lines}) == 4
