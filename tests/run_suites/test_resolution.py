"""Frame resolution per suite and model: the papers' defaults, --max-side, presets, identity, reports.

ProMQA's Table 10 sends 765p (1360 wide) frames to the API models and 288p / 336p to the open ones;
SciVideoBench evaluates every model at its native processing (source-size frames); SFE sends its
images as released. The frames that reach a real HTTP server are measured, not assumed.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.media.sampler import sample_with_settings
from expvid.suites.promqa import ProMQASuite, load_promqa
from expvid.suites.protocol import FrameOptions
from expvid.suites.registry import get_suite
from expvid.suites.scivideobench.sample import HEIGHT, WIDTH

runner = CliRunner()


def sizes(images: list[bytes]) -> set[tuple[int, int]]:
    result = set()
    for data in images:
        with Image.open(io.BytesIO(data)) as image:
            result.add(image.size)
    return result


def test_each_suite_gets_its_papers_resolution_unless_one_is_given() -> None:
    frames = FrameOptions(counts={"all": 4})
    svb = get_suite("scivideobench").resolve_frames(frames)
    promqa = get_suite("promqa").resolve_frames(FrameOptions())
    sfe = get_suite("sfe").resolve_frames(FrameOptions())  # no frames: nothing to resolve
    expvid = get_suite("expvid").resolve_frames(FrameOptions())
    assert (svb.size, svb.max_side, svb.counts) == (None, None, {"all": 4})  # native processing
    assert (promqa.size, promqa.max_side) == (None, 1360)  # Table 10: 765p, 1360 wide
    assert sfe == FrameOptions()  # identity as before: SFE run directories stay resumable
    assert (expvid.size, expvid.max_side) == (224, None)  # ExpVid F.2: 224x224
    given = FrameOptions(max_side=640)
    assert get_suite("promqa").resolve_frames(given) == given
    square = FrameOptions(size=224)  # an explicit 224 is kept, also where the paper says otherwise
    assert get_suite("scivideobench").resolve_frames(square).size == 224


@pytest.mark.parametrize(
    ("preset", "frames", "size"),
    [
        ("gpt-4o", 50, (1360, 765)),  # "GPT-4o (50f, 765p)"
        ("claude-3.5-sonnet", 10, (1360, 765)),
        ("llava-1.5", 50, (512, 288)),  # "(50f, 288p)"
        ("qwen2-vl", 100, (597, 336)),  # "(100f, 336p)"
        ("gpt-4o-250f", 250, (512, 288)),  # Table 15
    ],
)
def test_promqa_presets_send_table_10_frames_and_resolution(
    promqa_sample, tmp_path, preset: str, frames: int, size: tuple[int, int]
) -> None:
    """A 1920x1080 recording (16:9, as CaptainCook4D's) gives exactly the paper's "p" per row."""
    root = tmp_path / "promqa"
    shutil.copytree(promqa_sample, root)
    dataset = load_promqa(root)
    item = dataset.items[0]
    assert item.media is not None
    recording = root / "resolution_4k" / f"{item.meta['recording_id']}_4K.mp4"
    recording.parent.mkdir()
    subprocess.run(
        ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=1920x1080:rate=2:duration=3",
         "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", str(recording)],
        check=True,
    )  # fmt: skip
    Path(item.media.path).unlink()  # only the 4K file is left: the loader must find it
    suite = ProMQASuite()
    item = next(i for i in suite.load(root).items if i.id == item.id)
    assert item.media is not None and item.media.path.endswith("_4K.mp4")
    settings = suite.sampler(item, suite.frame_preset(preset))
    assert settings is not None and settings.max_frames == frames
    sampled = sample_with_settings(item.media.path, settings, start=0.0, end=2.0, cache=False)
    assert sizes([frame.data for frame in sampled.frames]) == {size}


def test_promqa_finds_the_360p_recordings(promqa_sample, tmp_path) -> None:
    root = tmp_path / "promqa"
    shutil.copytree(promqa_sample, root)
    moved = set()
    for video in sorted((root / "videos").glob("*.mp4")):
        target = root / "resolution_360p" / f"{video.stem}_360p.mp4"
        target.parent.mkdir(exist_ok=True)
        video.rename(target)
        moved.add(target.name)
    dataset = load_promqa(root, strict=True)
    assert dataset.items and not dataset.problems
    assert {Path(item.media.path).name for item in dataset.items if item.media} == moved  # type: ignore[union-attr]
    assert all("resolution_360p" in item.media.path for item in dataset.items if item.media)  # type: ignore[union-attr]


def _eval(data: Path, out: Path, model: str, *extra: str):
    return runner.invoke(
        app,
        ["eval", "--suite", "scivideobench", "--data", str(data), "--model", model, "--out", str(out),
         "--no-cache", "--quiet", "--tasks", "conceptual", "--frames", "all=4", *extra],
    )  # fmt: skip


def test_max_side_reaches_the_model_is_the_runs_identity_and_is_reported(
    svb_sample, tmp_path, model_server, plain
) -> None:
    out = tmp_path / "run"
    model = f"openai:loopback@{model_server.openai_base_url}"
    result = _eval(svb_sample, out, model, "--max-side", "80")
    assert result.exit_code == 0, result.output
    assert model_server.requests and all(
        sizes(r.images) == {(80, 80 * HEIGHT // WIDTH)} for r in model_server.requests
    )  # aspect kept: 160x96 -> 80x48
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["identity"]["frames"]["conceptual"]["max_side"] == 80
    assert manifest["samplers"]["conceptual"]["max_side"] == 80
    assert "frames 4 linspace (first to last frame); longest side ≤ 80 px (aspect kept)" in plain(
        result.output
    )  # every report says it

    other = _eval(svb_sample, out, model, "--max-side", "120")  # resuming at another resolution
    assert (
        other.exit_code != 0 and "other settings" in plain(other.output) and "max_side" in plain(other.output)
    )
    csv = runner.invoke(app, ["report", str(out), "--csv", str(tmp_path / "t.csv")])
    assert csv.exit_code == 0, csv.output
    header, row = (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines()[:2]
    assert header.endswith("frames and resolution") and row.endswith("longest side ≤ 80 px (aspect kept)")


def test_default_is_the_source_size_and_presets_decide_when_nothing_is_given(
    svb_sample, tmp_path, model_server, plain
) -> None:
    model = f"openai:loopback@{model_server.openai_base_url}"
    result = _eval(svb_sample, tmp_path / "native", model)
    assert result.exit_code == 0, result.output
    assert all(sizes(r.images) == {(WIDTH, HEIGHT)} for r in model_server.requests)
    assert "source size (aspect kept)" in plain(result.output)
    squashed = _eval(svb_sample, tmp_path / "square", model, "--size", "64")
    assert squashed.exit_code == 0, squashed.output
    assert sizes(model_server.requests[-1].images) == {(64, 64)} and "64x64 (squashed)" in plain(
        squashed.output
    )
    both = _eval(svb_sample, tmp_path / "both", model, "--size", "64", "--max-side", "80")
    assert both.exit_code == 2 and "not both" in plain(both.output)


def test_sfe_sends_images_as_released(sfe_sample, tmp_path, plain) -> None:
    base = ["eval", "--suite", "sfe", "--data", str(sfe_sample), "--model", "random", "--no-cache", "--quiet"]
    refused = runner.invoke(app, [*base, "--out", str(tmp_path / "a"), "--max-side", "512"])
    assert refused.exit_code != 0 and "as released" in plain(refused.output)
    assert not (tmp_path / "a" / "predictions.jsonl").exists()
    done = runner.invoke(app, [*base, "--out", str(tmp_path / "b"), "--tasks", "mcq", "--size", "0"])
    assert done.exit_code == 0, done.output  # "source size" is what SFE sends anyway
    assert "images sent as released (source size)" in plain(done.output)
