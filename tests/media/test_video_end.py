"""Where a video ends is measured from its frames' timestamps, one rule for every container.

Why it matters: uniform sampling takes the midpoints of N equal segments of [start, end], so a
container that reports a different end for the same stream makes a model see different frames.
Containers do disagree (MP4 stores the last sample's duration, Matroska and WebM a rounded default
or none); presentation timestamps survive every remux.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.media.index import last_frame_duration, load_index, median
from expvid.media.plan import fps_times, uniform_times
from expvid.media.sampler import probe, sample_video_arrays

#: Remuxes / re-encodes of one variable-frame-rate stream (10 fps for 5 s, then 30 fps). MP4 and
#: MOV keep its 1/15360 s clock; Matroska and WebM store times in whole milliseconds.
SAME_CLOCK = ["vfr.mp4", "vfr.mov"]
MILLISECOND_CLOCK = ["vfr.mkv", "vfr_vp9.webm", "vfr_vp9.mp4"]
SAME_STREAM = SAME_CLOCK + MILLISECOND_CLOCK


def _chosen(path, ffmpeg_reference, num_frames: int | None = None, fps: float | None = None):
    """(target times, frame numbers drawn in the frames) the sampler's plan picks, without decoding."""
    index = load_index(path)
    info = index.info
    if num_frames is not None:
        targets = uniform_times(info.start, info.end, num_frames)
    else:
        assert fps is not None
        targets = fps_times(info.start, info.end, fps)
    frames = ffmpeg_reference(path).frames
    return targets, [frames[i].code for i in index.frames_at(targets)]


def test_one_stream_ends_at_the_same_time_in_every_container(cli_videos) -> None:
    ends = {name: probe(cli_videos[name]).end for name in SAME_STREAM}
    # 15 s: the last frame (t = 14.9667 s) lasts as long as the 30 fps frames before it. A 1 ms
    # clock stores that frame at 14.967 s; nothing else may differ.
    assert all(end == pytest.approx(15.0, abs=0.0005) for end in ends.values()), ends
    assert ends["vfr.mp4"] == ends["vfr.mov"]


SETTINGS = [{"num_frames": n} for n in range(1, 129)] + [{"fps": fps} for fps in (0.5, 1.0, 2.0, 3.0)]


def test_the_same_clock_picks_the_same_frames(cli_videos, ffmpeg_reference) -> None:
    for settings in SETTINGS:
        picks = [_chosen(cli_videos[name], ffmpeg_reference, **settings)[1] for name in SAME_CLOCK]
        assert picks[0] == picks[1], settings


@pytest.mark.parametrize("other", MILLISECOND_CLOCK)
def test_a_millisecond_clock_changes_only_frames_chosen_within_a_millisecond_of_a_frame_change(
    other: str, cli_videos, ffmpeg_reference
) -> None:
    """Matroska rounds every frame's time to 1 ms, so a target that close to a frame change may
    land on the neighbouring frame (the files really differ there); any other difference would
    come from the rule, as it did when the end came from the container (12% of targets here)."""
    base = cli_videos["vfr.mp4"]
    base_times = load_index(base).frame_times
    differing = total = 0
    for settings in SETTINGS:
        targets, picks = _chosen(base, ffmpeg_reference, **settings)
        other_targets, other_picks = _chosen(cli_videos[other], ffmpeg_reference, **settings)
        assert len(other_targets) == len(targets), settings
        for target, pick, other_pick in zip(targets, picks, other_picks, strict=True):
            total += 1
            if pick != other_pick:
                differing += 1
                assert np.min(np.abs(base_times - target)) < 0.001, (settings, target, pick, other_pick)
    assert differing <= 0.01 * total


def test_decoded_frames_agree_across_containers(cli_videos, frame_code) -> None:
    decoded = {
        name: [
            frame_code(f.image)
            for f in sample_video_arrays(cli_videos[name], num_frames=48, cache=False).frames
        ]
        for name in ("vfr.mp4", "vfr.mov", "vfr_vp9.webm")
    }
    assert decoded["vfr.mp4"] == decoded["vfr.mov"] == decoded["vfr_vp9.webm"]


def test_a_stream_copy_cut_ends_where_its_frames_do(cli_videos, ffmpeg_reference) -> None:
    """`-t 8` leaves a ragged tail (B-frames cut off): the gap before the last frame is not its length."""
    for name in ("cut_copy.mp4", "cut_copy.mov"):
        frames = ffmpeg_reference(cli_videos[name]).frames
        assert frames[-1].time - frames[-2].time > 0.05  # the gap exists
        assert probe(cli_videos[name]).end == pytest.approx(frames[-1].time + 1 / 30, abs=1e-6)


def test_last_frame_duration_rule() -> None:
    cfr = np.arange(0, 3000, 100)
    assert last_frame_duration(cfr) == 100
    # 30 fps in a 1 ms time base: 33, 33, 34, ... -> the true 33.33, not a rounded interval.
    ms = np.round(np.arange(40) * 1000 / 30).astype(np.int64)
    assert last_frame_duration(ms) == pytest.approx(1000 / 30, abs=0.05)
    # A rate change long ago does not matter; a gap at the very end (dropped frames) does not count.
    vfr = np.concatenate([np.arange(0, 1000, 100), 1000 + np.arange(0, 40) * 25])
    assert last_frame_duration(vfr) == 25
    gap = np.append(cfr, cfr[-1] + 300)
    assert last_frame_duration(gap) == 100
    assert last_frame_duration(np.array([0])) is None


@given(st.lists(st.integers(min_value=-(2**40), max_value=2**40), min_size=1, max_size=40))
def test_median_is_numpys(values: list[int]) -> None:
    assert median(np.asarray(values, dtype=np.int64)) == float(np.median(values))


def test_sampling_a_video_does_not_import_numpy_ma(videos) -> None:
    """np.median's NaN check imports numpy.ma (10-15 ms of every cold `expvid frames`)."""
    script = (
        "import sys\nfrom expvid.media.sampler import sample_video\n"
        f"sample_video({str(videos['cfr.mp4'])!r}, num_frames=3, cache=False)\n"
        "print('numpy.ma' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
