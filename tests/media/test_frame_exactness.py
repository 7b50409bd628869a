"""The sampler returns exactly the frame a full decode shows at each target time.

Each returned frame is checked three ways against the reference decoder (decode every frame with
PyAV, take the last with pts <= t): its recorded index and time, the frame number drawn in its
pixels, and its pixels themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from expvid.media.plan import uniform_times
from expvid.media.sampler import SampledArrays, probe, sample_video_arrays

EXACT_VIDEOS = [
    "cfr.mp4",
    "nob.mp4",
    "cfr.mkv",
    "vfr.mp4",
    "rot90.mp4",
    "rot180.mp4",
    "rot270.mp4",
    "long_gop.mp4",
    "open_gop.mkv",
    "vp9.webm",
    "faststart.mp4",
]


def assert_matches_reference(sampled: SampledArrays, ref, frame_code: Callable[[np.ndarray], int]) -> None:
    for frame in sampled.frames:
        expected = ref.at(frame.target)
        assert frame.index == expected.index, f"target {frame.target}: got frame {frame.index}"
        assert frame.time == pytest.approx(expected.time, abs=1e-9)
        assert frame_code(frame.image) == expected.code
        if frame.image.shape == expected.rgb.shape:
            diff = np.abs(frame.image.astype(np.int16) - expected.rgb.astype(np.int16))
            assert diff.max() <= 2, f"frame {frame.index} differs from the reference by {diff.max()}"


@pytest.mark.parametrize("name", EXACT_VIDEOS)
@pytest.mark.parametrize("num_frames", [1, 7, 32])
def test_uniform_sampling_is_frame_exact(name: str, num_frames: int, videos, reference, frame_code) -> None:
    path = videos[name]
    ref = reference(path)
    sampled = sample_video_arrays(path, num_frames=num_frames, size=None, cache=False)
    assert len(sampled.frames) == num_frames
    assert [frame.target for frame in sampled.frames] == pytest.approx(
        uniform_times(sampled.info.start, sampled.info.end, num_frames)
    )
    assert sampled.frames[0].image.shape == (sampled.info.height, sampled.info.width, 3)
    assert_matches_reference(sampled, ref, frame_code)


def test_probe_measures_the_video_from_its_packets(videos, reference) -> None:
    for name in EXACT_VIDEOS:
        ref = reference(videos[name])
        info = probe(videos[name])
        assert info.num_frames == len(ref.frames), name
        assert info.start == pytest.approx(ref.frames[0].time)
    mkv = probe(videos["cfr.mkv"])  # MKV headers carry no frame count: measured anyway
    # Matroska keeps times in whole milliseconds: the last frame sits at 9.967 s, not 9.9667 s.
    assert (mkv.num_frames, mkv.duration, mkv.fps) == (
        300,
        pytest.approx(10.0, abs=0.0005),
        pytest.approx(30.0, abs=0.01),
    )
    assert probe(videos["cfr.mp4"]).duration == pytest.approx(10.0, abs=1e-9)
    vfr = probe(videos["vfr.mp4"])
    assert vfr.variable_frame_rate and not mkv.variable_frame_rate
    assert vfr.duration == pytest.approx(10.0, abs=0.11)
    rotated = probe(videos["rot90.mp4"])
    assert (rotated.rotation, rotated.width, rotated.height) == (90, 160, 96)  # as displayed
    assert (rotated.coded_width, rotated.coded_height) == (96, 160)  # as stored
    assert probe(videos["rot180.mp4"]).rotation == 180
    assert probe(videos["rot270.mp4"]).rotation == 270


def test_variable_frame_rate_targets_use_pts_not_average_fps(videos, reference, frame_code) -> None:
    path = videos["vfr.mp4"]  # 5 s at 10 fps (frames 0-49), then 5 s at 30 fps (frames 50-199)
    ref = reference(path)
    sampled = sample_video_arrays(path, times=[0.05, 4.95, 5.0, 7.51, 9.99], size=None, cache=False)
    assert [frame.index for frame in sampled.frames] == [0, 49, 50, 125, 199]
    assert_matches_reference(sampled, ref, frame_code)
    # What index-based samplers do (t x average fps) is 50 frames off at t = 7.51 s here.
    assert round(7.51 * sampled.info.fps) != 125


def test_a_time_on_a_frame_boundary_is_that_frame(videos, reference) -> None:
    path = videos["cfr.mp4"]
    ref = reference(path)
    k = 123
    on, before = ref.frames[k].time, ref.frames[k].time - 1e-4
    sampled = sample_video_arrays(path, times=[on, before, 0.0], size=None, cache=False)
    assert [frame.index for frame in sampled.frames] == [k, k - 1, 0]


@pytest.mark.parametrize("name", ["cfr.mp4", "vfr.mp4", "open_gop.mkv"])
def test_window_of_a_longer_video(name: str, videos, reference, frame_code) -> None:
    path = videos[name]
    ref = reference(path)
    sampled = sample_video_arrays(path, num_frames=8, start=3.3, end=6.1, size=None, cache=False)
    assert sampled.window == (3.3, 6.1)
    assert all(3.3 < frame.target < 6.1 for frame in sampled.frames)
    assert_matches_reference(sampled, ref, frame_code)


def test_fps_sampling_with_a_cap_and_keep_last_thinning(videos, reference, frame_code) -> None:
    path = videos["cfr.mp4"]
    ref = reference(path)
    every = sample_video_arrays(path, fps=2.0, size=None, cache=False)
    assert [frame.target for frame in every.frames] == [k / 2 for k in range(20)]
    assert_matches_reference(every, ref, frame_code)
    capped = sample_video_arrays(path, fps=2.0, max_frames=6, size=None, cache=False)
    assert len(capped.frames) == 6
    assert_matches_reference(capped, ref, frame_code)
    thinned = sample_video_arrays(path, fps=1.0, max_frames=4, thinning="keep_last", end=9.5, cache=False)
    # candidates 0..9 s (10), rate 3: keep 9, 6, 3, 0 -> the frame at 9 s is always there.
    assert [frame.target for frame in thinned.frames] == [0.0, 3.0, 6.0, 9.0]
    assert [frame.index for frame in thinned.frames] == [0, 90, 180, 270]
    assert [frame_code(frame.image) for frame in thinned.frames] == [0, 90, 180, 270]


def test_more_targets_than_frames_repeat_frames_in_target_order(videos, reference, frame_code) -> None:
    path = videos["rot90.mp4"]  # 90 frames
    ref = reference(path)
    sampled = sample_video_arrays(path, num_frames=200, size=None, cache=False)
    indices = [frame.index for frame in sampled.frames]
    assert len(indices) == 200 and indices == sorted(indices) and set(indices) == set(range(90))
    assert sampled.stats.frames_converted == 90
    assert_matches_reference(sampled, ref, frame_code)


def test_one_and_two_decoders_agree(videos) -> None:
    path = videos["long_gop.mp4"]
    one = sample_video_arrays(path, num_frames=23, cache=False, workers=1)
    two = sample_video_arrays(path, num_frames=23, cache=False, workers=2)
    assert (one.stats.workers, two.stats.workers) == (1, 2)
    assert [f.index for f in one.frames] == [f.index for f in two.frames]
    for a, b in zip(one.frames, two.frames, strict=True):
        assert np.array_equal(a.image, b.image)


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_rotated_frames_come_out_upright_at_224(degrees: int, videos, frame_code, reference) -> None:
    path: Path = videos[f"rot{degrees}.mp4"]
    sampled = sample_video_arrays(path, num_frames=5, cache=False)
    ref = reference(path)
    for frame in sampled.frames:
        assert frame.image.shape == (224, 224, 3)
        assert frame_code(frame.image) == ref.at(frame.target).code  # unreadable if not upright


@pytest.mark.parametrize("name", ["cfr.mkv", "vfr.mp4", "open_gop.mkv", "long_gop.mp4"])
def test_random_explicit_times_match_reference(name: str, videos, reference, frame_code) -> None:
    path = videos[name]
    ref = reference(path)
    rng = np.random.default_rng(len(name))
    end = probe(path).end
    times = sorted(rng.uniform(0.0, end - 1e-6, size=41).tolist())
    sampled = sample_video_arrays(path, times=times, size=None, cache=False)
    assert [frame.target for frame in sampled.frames] == times
    assert_matches_reference(sampled, ref, frame_code)
