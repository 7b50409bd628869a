"""`--frames-control none|single|shuffled`: what reaches the model, what the run directory records,
what every rendering says, and that resuming treats it as part of the run's identity."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer
from expvid.media.synth import read_frame_code
from expvid.run.config import EvalConfig
from expvid.run.evaluate import EvalResult, evaluate
from expvid.run.report.table import build_table, load_runs
from expvid.run.report.text_formats import run_notes, to_markdown
from expvid.schema import DataError
from expvid.suites.registry import get_suite
from expvid.view import ViewSession
from expvid.view.overview import build_overview
from expvid.view.rows import build_rows


def _run(sample_dir: Path, server: LoopbackServer, out: Path, cache: Path, **fields: Any) -> EvalResult:
    config = EvalConfig(
        data=sample_dir,
        model=fields.pop("model", f"openai:loopback@{server.openai_base_url}"),
        out=out,
        tasks=["tools"],
        limit=2,
        cache_dir=cache,
        n_bootstrap=20,
        **fields,
    )
    return asyncio.run(evaluate(config, command=["test"], show_progress=False))


def _predictions(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _ranks(values: list[int]) -> list[int]:
    return [sorted(values).index(v) for v in values]


def _codes(images: list[bytes]) -> list[int]:
    return [read_frame_code(np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))) for data in images]


def test_each_control_sends_what_it_says_and_records_it(
    sample_dir: Path, model_server: LoopbackServer, tmp_path: Path, frame_cache_dir: Path
) -> None:
    _run(sample_dir, model_server, tmp_path / "full", frame_cache_dir)
    full = {p["item_id"]: p for p in _predictions(tmp_path / "full")}
    assert all(p["n_images"] == 8 for p in full.values())

    model_server.reset()
    _run(sample_dir, model_server, tmp_path / "none", frame_cache_dir, frames_control="none")
    assert [r.n_images for r in model_server.requests] == [0, 0]
    for prediction in _predictions(tmp_path / "none"):
        assert prediction["n_images"] == 0 and prediction["sent"]["frames_control"] == "none"
        assert (
            prediction["frames"] == full[prediction["item_id"]]["frames"]
        )  # sampled and logged all the same

    model_server.reset()
    _run(sample_dir, model_server, tmp_path / "single", frame_cache_dir, frames_control="single")
    assert [r.n_images for r in model_server.requests] == [1, 1]
    manifest = json.loads((tmp_path / "single" / "manifest.json").read_text())
    assert (
        manifest["samplers"]["tools"]["num_frames"] == 1
        and manifest["config"]["generation"]["frames_control"] == "single"
    )
    items = {item.id: item for item in get_suite("expvid").load(sample_dir)}
    for prediction in _predictions(tmp_path / "single"):
        [frame] = prediction["frames"]
        seen = [f["time"] for f in full[prediction["item_id"]]["frames"]]
        media = items[prediction["item_id"]].media
        middle = ((media.start or 0.0) + (media.end if media.end is not None else seen[-1])) / 2
        assert abs(frame["time"] - middle) <= (
            seen[1] - seen[0]
        )  # the middle of the clip, within a frame step

    model_server.reset()
    _run(sample_dir, model_server, tmp_path / "shuffled", frame_cache_dir, frames_control="shuffled")
    for prediction in _predictions(tmp_path / "shuffled"):
        indices = [f["index"] for f in prediction["frames"]]
        assert sorted(indices) == sorted(f["index"] for f in full[prediction["item_id"]]["frames"])
        assert indices != sorted(indices)  # never the original order
    # The images went out in the recorded order (frame codes count source frames: compare the ranks).
    orders = sorted(_ranks([f["index"] for f in p["frames"]]) for p in _predictions(tmp_path / "shuffled"))
    assert sorted(_ranks(_codes(request.images)) for request in model_server.requests) == orders

    runs = [tmp_path / name for name in ("full", "none", "single", "shuffled")]
    table = build_table(get_suite("expvid"), load_runs(runs), references=[])
    notes = run_notes(table)
    viewer = build_overview(session := ViewSession(runs), build_rows(session))["table_notes"]
    for words in ("CONTROL run without frames", "one frame per item", "frames shuffled"):
        assert sum(words in note for note in notes) == 1, words
        assert any(words in note for note in viewer), words
        assert words in to_markdown(table)
    assert not any("CONTROL" in note and "full" in note.split(":")[0] for note in notes)


def test_the_control_is_part_of_the_resume_identity(
    sample_dir: Path, model_server: LoopbackServer, tmp_path: Path, frame_cache_dir: Path
) -> None:
    out = tmp_path / "run"
    _run(sample_dir, model_server, out, frame_cache_dir, frames_control="none")
    with pytest.raises(DataError, match=r"frames_control: run has 'none', now 'full'"):
        _run(sample_dir, model_server, out, frame_cache_dir)
    _run(sample_dir, model_server, out, frame_cache_dir, frames_control="none")  # the same: resumes

    old = tmp_path / "old"  # a run directory made before the setting existed
    _run(sample_dir, model_server, old, frame_cache_dir)
    manifest = json.loads((old / "manifest.json").read_text())
    for block in ("identity", "settings"):
        del manifest["config"][block]["frames_control"]
    del manifest["config"]["generation"]["frames_control"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match=r"frames_control: not in the run, now 'single'"):
        _run(sample_dir, model_server, old, frame_cache_dir, frames_control="single")
    resumed = _run(sample_dir, model_server, old, frame_cache_dir)  # resumes as the default
    assert resumed.resumed == 2 and resumed.generated == 0


def test_a_blind_model_is_the_no_frames_control(
    sample_dir: Path, model_server: LoopbackServer, tmp_path: Path, frame_cache_dir: Path
) -> None:
    out = tmp_path / "blind"
    _run(
        sample_dir,
        model_server,
        out,
        frame_cache_dir,
        model=f"blind:openai:loopback@{model_server.openai_base_url}",
    )
    assert [r.n_images for r in model_server.requests] == [0, 0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["generation"]["frames_control"] == "none"
    assert any(
        "CONTROL run without frames" in n
        for n in run_notes(build_table(get_suite("expvid"), load_runs([out]), references=[]))
    )
    with pytest.raises(ValueError, match="a blind: model sends none"):
        EvalConfig(data=sample_dir, model="blind:random", out=out, frames_control="single")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--frames-control", "half"],
            "Invalid value for --frames-control: expected one of full, none, single, shuffled, got 'half'",
        ),
        (
            ["--frames-control", "shuffled", "--input-mode", "video"],
            "--frames-control shuffled sends the frames as independent images",
        ),
    ],
)
def test_eval_refuses_a_bad_control_in_one_line(
    sample_dir: Path, tmp_path: Path, extra: list[str], message: str
) -> None:
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--data",
            str(sample_dir),
            "--model",
            "random",
            "--out",
            str(tmp_path / "x"),
            "--quiet",
            *extra,
        ],
    )
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "x").exists()


def test_an_eval_set_model_entry_sets_the_control(tmp_path: Path, sample_dir: Path) -> None:
    from expvid.run.eval_set_config import cell_config, cells_of, config_digest, load_eval_set

    path = tmp_path / "set.yaml"
    path.write_text(
        f"out: {tmp_path / 'out'}\nsuites:\n  - name: expvid\n    data: {sample_dir}\n"
        "models:\n  - name: seeing\n    model: random\n  - name: text only\n    model: random\n    frames_control: none\n"
    )
    config = load_eval_set(path)
    seeing, blind = (cell_config(config, cell, sample_dir) for cell in cells_of(config))
    assert (seeing.frames_control, blind.frames_control) == ("full", "none")
    assert config_digest(seeing) != config_digest(blind)
    # a cell finished before the setting existed was digested without it: it stays done
    before = seeing.model_dump(mode="json")
    before.pop("frames_control")
    old = hashlib.sha256(json.dumps(before, sort_keys=True, default=str).encode()).hexdigest()[:16]
    assert config_digest(seeing) == old
