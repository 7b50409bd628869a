"""Pure frame planners: which target times each strategy asks for (no video involved)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.media.errors import SamplingError, WindowError
from expvid.media.plan import (
    FramePlan,
    fps_candidate_times,
    fps_times,
    keep_last_pick,
    uniform_pick,
    uniform_times,
)


def test_uniform_targets_are_segment_midpoints() -> None:
    assert uniform_times(0.0, 10.0, 4) == [1.25, 3.75, 6.25, 8.75]
    assert uniform_times(20.0, 30.0, 1) == [25.0]
    assert uniform_times(2.0, 4.0, 2) == [2.5, 3.5]


@given(
    start=st.floats(0, 1000),
    length=st.floats(0.01, 1000),
    n=st.integers(1, 600),
)
def test_uniform_targets_are_inside_the_window_increasing_and_evenly_spaced(
    start: float, length: float, n: int
) -> None:
    end = start + length
    targets = uniform_times(start, end, n)
    assert len(targets) == n
    assert start < targets[0] and targets[-1] < end
    assert all(b > a for a, b in itertools.pairwise(targets))
    step = length / n
    assert targets[0] - start == pytest.approx(step / 2, rel=1e-6, abs=1e-9)
    assert end - targets[-1] == pytest.approx(step / 2, rel=1e-6, abs=1e-9)


def test_fps_candidates_exclude_the_window_end() -> None:
    assert fps_candidate_times(0.0, 3.0, 1.0) == [0.0, 1.0, 2.0]
    assert fps_candidate_times(0.0, 3.5, 1.0) == [0.0, 1.0, 2.0, 3.0]
    assert fps_candidate_times(10.0, 11.0, 4.0) == [10.0, 10.25, 10.5, 10.75]


def test_fps_cap_picks_uniformly() -> None:
    assert uniform_pick(10, 5) == [1, 3, 5, 7, 9]
    assert uniform_pick(3, 5) == [0, 1, 2]
    times = fps_times(0.0, 100.0, 1.0, max_frames=4)
    assert times == [12.0, 37.0, 62.0, 87.0]


def test_keep_last_thinning_matches_promqa() -> None:
    # rate = ceil(n / max_frames); keep n-1, n-1-rate, ... (the last frame is always kept).
    assert keep_last_pick(10, 4) == [0, 3, 6, 9]
    assert keep_last_pick(11, 4) == [1, 4, 7, 10]
    assert keep_last_pick(9, 10) == list(range(9))
    times = fps_times(0.0, 11.0, 1.0, max_frames=4, thinning="keep_last")
    assert times == [1.0, 4.0, 7.0, 10.0]


@given(count=st.integers(1, 5000), keep=st.integers(1, 300))
def test_thinning_properties(count: int, keep: int) -> None:
    for picked in (uniform_pick(count, keep), keep_last_pick(count, keep)):
        assert len(picked) <= keep
        assert len(picked) == len(set(picked))
        assert picked == sorted(picked)
        assert all(0 <= i < count for i in picked)
    assert len(uniform_pick(count, keep)) == min(count, keep)
    last = keep_last_pick(count, keep)
    assert last[-1] == count - 1
    if count > keep:
        rate = math.ceil(count / keep)
        assert all(b - a == rate for a, b in itertools.pairwise(last))


def test_plan_window_defaults_to_the_video_and_rejects_outside() -> None:
    plan = FramePlan.build(num_frames=2)
    assert plan.window(0.5, 10.0) == (0.5, 10.0)
    assert plan.targets(0.0, 8.0) == [2.0, 6.0]
    windowed = FramePlan.build(num_frames=2, start=2.0, end=4.0)
    assert windowed.targets(0.0, 8.0) == [2.5, 3.5]
    with pytest.raises(WindowError, match="beyond the end"):
        FramePlan.build(num_frames=2, end=9.0).targets(0.0, 8.0)
    with pytest.raises(WindowError, match="not before"):
        FramePlan.build(num_frames=2, start=8.0).targets(0.0, 8.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({}, SamplingError, "exactly one"),
        ({"num_frames": 4, "fps": 1.0}, SamplingError, "exactly one"),
        ({"num_frames": 0}, SamplingError, "num_frames"),
        ({"fps": -1.0}, SamplingError, "fps"),
        ({"fps": 1.0, "max_frames": 0}, SamplingError, "max_frames"),
        ({"num_frames": 4, "max_frames": 3}, SamplingError, "fps sampling only"),
        ({"times": []}, SamplingError, "empty"),
        ({"num_frames": 4, "start": -1.0}, WindowError, "before the video starts"),
        ({"num_frames": 4, "start": 5.0, "end": 5.0}, WindowError, "not before"),
        ({"num_frames": 4, "start": 6.0, "end": 5.0}, WindowError, "not before"),
        ({"num_frames": 4, "end": math.nan}, WindowError, "finite"),
    ],
)
def test_invalid_requests_are_errors(kwargs: dict, error: type[Exception], text: str) -> None:
    with pytest.raises(error, match=text):
        FramePlan.build(**kwargs)


def test_explicit_times_must_lie_in_the_video() -> None:
    plan = FramePlan.build(times=[0.0, 3.2, 7.9])
    assert plan.targets(0.04, 8.0) == [0.0, 3.2, 7.9]
    with pytest.raises(WindowError, match="outside"):
        FramePlan.build(times=[8.0]).targets(0.0, 8.0)
    with pytest.raises(WindowError, match="outside"):
        FramePlan.build(times=[1.0], start=2.0, end=4.0).targets(0.0, 8.0)


def test_describe_names_the_strategy_and_only_its_fields() -> None:
    assert FramePlan.build(num_frames=8).describe() == {
        "strategy": "uniform",
        "start": None,
        "end": None,
        "num_frames": 8,
    }
    described = FramePlan.build(fps=1.0, max_frames=32, thinning="keep_last", end=60.0).describe()
    assert described["strategy"] == "fps_keep_last"
    assert described["max_frames"] == 32 and described["end"] == 60.0
