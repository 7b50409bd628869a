"""`expvid frames`: JSON of the chosen frames, images with --out, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.media.transform import decode_image

runner = CliRunner()


def test_frames_prints_json_and_writes_images(videos, reference, frame_code, tmp_path: Path) -> None:
    path = videos["cfr.mp4"]
    out = tmp_path / "frames"
    result = runner.invoke(app, ["frames", str(path), "--num", "4", "--out", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["video"]["num_frames"] == 300 and report["video"]["path"] == str(path)
    frames = report["frames"]
    assert [f["target"] for f in frames] == [1.25, 3.75, 6.25, 8.75]
    assert [f["index"] for f in frames] == [reference(path).at(f["target"]).index for f in frames]
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [Path(f["file"]).name for f in frames]
    assert all(re.fullmatch(r"frame_\d{4}_idx\d{6}\.jpg", f.name) for f in files)
    assert files[0].name == f"frame_0000_idx{frames[0]['index']:06d}.jpg"
    for frame, file in zip(frames, files, strict=True):
        assert frame_code(decode_image(file.read_bytes())) == frame["index"]


def test_frames_fps_window_png_and_max_side(videos, tmp_path: Path) -> None:
    path = videos["cfr.mp4"]
    args = [
        "frames",
        str(path),
        "--fps",
        "1",
        "--max-frames",
        "3",
        "--keep-last",
        "--start",
        "2",
        "--end",
        "8",
    ]
    args += [
        "--max-side",
        "80",
        "--format",
        "png",
        "--out",
        str(tmp_path),
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [f["target"] for f in report["frames"]] == [3.0, 5.0, 7.0]  # 2..7 s, rate 2, last kept
    assert {(f["width"], f["height"]) for f in report["frames"]} == {(80, 48)}
    assert len(list(tmp_path.glob("frame_*.png"))) == 3
    again = runner.invoke(app, args)
    assert json.loads(again.stdout)["from_cache"] is True


def test_frames_errors_are_one_line_with_nonzero_exit(videos, tmp_path: Path) -> None:
    missing = tmp_path / "missing.mp4"
    result = runner.invoke(app, ["frames", str(missing), "--num", "3"])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {missing}: no such file"

    outside = runner.invoke(app, ["frames", str(videos["cfr.mp4"]), "--num", "3", "--end", "99"])
    assert outside.exit_code == 1 and "beyond the end" in outside.stderr
    assert len(outside.stderr.strip().splitlines()) == 1

    both = runner.invoke(app, ["frames", str(videos["cfr.mp4"]), "--num", "3", "--fps", "1"])
    assert both.exit_code == 2 and "exactly one" in both.stderr


def test_frames_at_explicit_times(videos) -> None:
    result = runner.invoke(app, ["frames", str(videos["vfr.mp4"]), "-t", "0", "-t", "7.51", "--no-cache"])
    assert result.exit_code == 0, result.output
    frames = json.loads(result.stdout)["frames"]
    assert [(f["index"], f["target"]) for f in frames] == [(0, 0.0), (125, 7.51)]
    assert frames[1]["time"] == 7.5
