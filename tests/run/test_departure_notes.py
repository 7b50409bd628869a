"""Departure notes read a run directory alone: the manifest's blocks, or the predictions of older runs."""

from __future__ import annotations

from pathlib import Path

from expvid.run.report.departures import departure_notes
from expvid.run.rundir import RunDir
from expvid.schema import Prediction, RunManifest, SamplerSettings

PAPER = {"temperature": 0.1, "max_tokens": 8192, "source": "ExpVid appendix F.2"}


def _run(tmp_path: Path, config: dict, predictions: list[Prediction], samplers: dict | None = None) -> RunDir:
    rundir = RunDir(tmp_path / "run")
    rundir.write_manifest(
        RunManifest(
            suite="expvid", model="m", config=config, samplers=samplers or {"tools": SamplerSettings()}
        )
    )
    rundir.predictions_path.write_text("".join(p.model_dump_json() + "\n" for p in predictions))
    return rundir


def _prediction(i: int, **sent) -> Prediction:
    return Prediction(item_id=f"tools/{i}", task="tools", model="m", response="\\boxed{A}", sent=sent)


def test_a_video_run_of_a_checkpoint_with_its_own_sampling_says_so(tmp_path):
    config = {
        "generation": {"temperature": 0.1, "max_tokens": 8192, "paper": PAPER, "input_mode": "video"},
        "backend": {
            "kind": "vllm",
            "generation_config": {"top_k": 1, "top_p": 0.001, "repetition_penalty": 1.05},
        },
    }
    predictions = [_prediction(i, temperature=0.1, input_mode="video", size=336) for i in range(4)]
    notes = departure_notes(_run(tmp_path, config, predictions), "qwen")
    assert "qwen: frames sent as one video on 4 of 4 request(s) (F.2: frames as independent images)" in notes
    assert "qwen: frames at 336x336 on 4 request(s) (F.2: 224x224)" in notes
    assert any("generation_config: top_p=0.001, top_k=1, repetition_penalty=1.05" in note for note in notes)
    assert not any("not settable" in note or "requested" in note for note in notes)


def test_a_reasoning_effort_is_noted(tmp_path):
    config = {"generation": {"temperature": 0.1, "max_tokens": 8192, "paper": PAPER}}
    predictions = [
        _prediction(0, temperature=None, reasoning_effort="minimal"),
        _prediction(1, reasoning_effort=None),
    ]
    notes = departure_notes(_run(tmp_path, config, predictions), "gpt-5")
    assert "gpt-5: reasoning_effort minimal on 1 of 2 request(s) (not set in F.2)" in notes


def test_a_run_at_the_papers_settings_has_no_notes(tmp_path):
    config = {"generation": {"temperature": 0.1, "max_tokens": 8192, "paper": PAPER, "input_mode": "images"}}
    predictions = [_prediction(i, temperature=0.1, input_mode="images", size=224) for i in range(3)]
    assert departure_notes(_run(tmp_path, config, predictions), "m") == []


def test_requested_settings_off_the_paper_are_noted(tmp_path):
    config = {"generation": {"temperature": 0.7, "max_tokens": 1024, "paper": PAPER}}
    notes = departure_notes(_run(tmp_path, config, [_prediction(0, temperature=0.7)]), "m")
    assert notes == ["m: temperature 0.7 requested (F.2: 0.1)", "m: at most 1024 new tokens (F.2: 8192)"]


def test_predictions_are_read_when_the_manifest_has_no_summary(tmp_path):
    """A run stopped before its summary was written still reports what its predictions say."""
    config = {"generation": {"temperature": 0.1, "max_tokens": 8192, "paper": PAPER}}
    predictions = [
        _prediction(0, temperature=None, not_sent={"temperature": "only the default (1)"}),
        _prediction(1, temperature=0.1),
    ]
    notes = departure_notes(_run(tmp_path, config, predictions), "m")
    assert notes == [
        "m: temperature not settable for this model: sent none on 1 of 2 request(s) (F.2: 0.1); only the default (1)"
    ]


def test_no_manifest_no_notes(tmp_path):
    (tmp_path / "run").mkdir()
    assert departure_notes(RunDir(tmp_path / "run"), "m") == []
