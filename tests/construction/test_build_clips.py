"""Frame-exact clip cutting (`expvid.media.clips.cut_clip`) on videos whose frames carry their numbers."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from expvid.media.clips import cut_clip
from expvid.media.errors import EmptyMediaError, MediaNotFoundError, WindowError
from expvid.media.synth import read_frame_code, scene_frame, write_video

W, H = 128, 80


def codes(path: Path) -> list[tuple[float, int]]:
    """(time, frame code) of every frame, rotation applied as a player would."""
    found = []
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            rgb = np.rot90(frame.to_ndarray(format="rgb24"), k=(frame.rotation or 0) // 90)
            found.append((float(frame.time), read_frame_code(rgb)))
    return found


@pytest.fixture(scope="module")
def coded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("clip_sources")
    frames = [scene_frame(i, W, H) for i in range(120)]
    made = {}
    # 10 fps, keyframes every 2 s, B-frames: cuts fall inside GOPs and frames are reordered.
    made["bframes"] = root / "bframes.mp4"
    write_video(made["bframes"], frames, fps=10, gop=20, bframes=2, preset="ultrafast")
    # Variable frame rate: 4 s at 10 fps, then 2 s at 30 fps.
    times = [i / 10 for i in range(40)] + [4 + i / 30 for i in range(60)]
    made["vfr"] = root / "vfr.mp4"
    write_video(made["vfr"], frames[:100], times=times, gop=25, bframes=2, preset="ultrafast")
    made["rot90"] = root / "rot90.mp4"
    write_video(made["rot90"], frames[:60], fps=10, gop=20, bframes=2, rotation=90, preset="ultrafast")
    return made


def test_span_with_a_removed_step_holds_exactly_the_expected_frames(coded, tmp_path):
    out = tmp_path / "clip.mp4"
    result = cut_clip(coded["bframes"], out, start=2.3, end=8.0, remove=[(3.0, 4.5)], preset="ultrafast")
    got = codes(out)
    expected = [*range(23, 30), *range(45, 80)]  # frame i is at i/10 s; [3.0, 4.5) holds frames 30..44
    assert [code for _, code in got] == expected
    assert result.frames == len(expected) and result.removed_frames == 15
    # Closed up: no gap and no frozen frame where the step was, and the clip starts at 0.
    times = [t for t, _ in got]
    assert times[0] == 0.0
    assert np.allclose(np.diff(times), 0.1)
    assert result.duration == pytest.approx(len(expected) / 10)
    assert (result.first_time, result.last_time) == (pytest.approx(2.3), pytest.approx(7.9))


def test_boundaries_are_half_open_and_float_noise_does_not_move_them(coded, tmp_path):
    out = tmp_path / "edges.mp4"
    cut_clip(coded["bframes"], out, start=0.1 * 3, end=0.1 * 7, preset="ultrafast")  # 0.30000000000000004
    assert [c for _, c in codes(out)] == [3, 4, 5, 6]
    cut_clip(coded["bframes"], out, start=0.0, end=1.0, remove=[(0.0, 0.2)], preset="ultrafast")
    assert [c for _, c in codes(out)] == list(range(2, 10))  # a removed span at the very start


def test_variable_frame_rate_keeps_each_frame_duration(coded, tmp_path):
    out = tmp_path / "vfr_clip.mp4"
    cut_clip(coded["vfr"], out, start=3.5, end=4.5, remove=[(3.8, 4.1)], preset="ultrafast")
    got = codes(out)
    # 10 fps frames 35..37 (3.5, 3.6, 3.7), then 30 fps frames from 4.1 s (index 40 + 3) to 4.5 s.
    assert [c for _, c in got] == [35, 36, 37, *range(43, 55)]
    gaps = np.diff([t for t, _ in got])
    assert np.allclose(gaps[:2], 0.1) and np.allclose(gaps[3:], 1 / 30, atol=1e-3)


def test_rotation_is_kept(coded, tmp_path):
    out = tmp_path / "rot_clip.mp4"
    cut_clip(coded["rot90"], out, start=1.0, end=2.0, preset="ultrafast")
    assert [c for _, c in codes(out)] == list(range(10, 20))  # readable only when the rotation is applied
    with av.open(str(out)) as container:
        assert next(container.decode(video=0)).rotation == 90


def test_bad_spans_fail_clearly_and_leave_no_partial_file(coded, tmp_path):
    out = tmp_path / "none.mp4"
    with pytest.raises(WindowError, match="empty"):
        cut_clip(coded["bframes"], out, start=5.0, end=5.0)
    with pytest.raises(EmptyMediaError, match=str(coded["bframes"])):
        cut_clip(coded["bframes"], out, start=20.0, end=25.0)  # after the last frame
    with pytest.raises(EmptyMediaError):
        cut_clip(coded["bframes"], out, start=1.0, end=2.0, remove=[(0.5, 3.0)])  # everything removed
    with pytest.raises(MediaNotFoundError):
        cut_clip(tmp_path / "missing.mp4", out, start=0.0, end=1.0)
    assert list(tmp_path.iterdir()) == []


def test_output_time_base_is_exact(coded, tmp_path):
    out = tmp_path / "tb.mp4"
    cut_clip(coded["bframes"], out, start=1.0, end=3.0, preset="ultrafast")
    with av.open(str(out)) as container:
        stream = container.streams.video[0]
        pts = [f.pts for f in container.decode(stream)]
        assert stream.time_base is not None
        assert [Fraction(p) * stream.time_base for p in pts] == [Fraction(i, 10) for i in range(20)]
