"""`spacing="linspace"`: N frame positions from the first to the last frame, as lmms-eval's readers pick them."""

from __future__ import annotations

import numpy as np
import pytest

from expvid.media.errors import SamplingError
from expvid.media.plan import FramePlan, linspace_times


def test_positions_are_numpys_linspace_over_the_frames_in_the_window() -> None:
    times = [i / 4 for i in range(24)]  # 24 frames at 4 fps
    assert linspace_times(times, 0.0, 6.0, 4) == [times[i] for i in (0, 7, 15, 23)]
    expected = np.linspace(0, 23, 7, dtype=int)
    assert linspace_times(times, 0.0, 6.0, 7) == [times[i] for i in expected]
    assert linspace_times(times, 1.0, 3.0, 3) == [1.0, 1.75, 2.75]  # only the frames of [1, 3)
    assert linspace_times(times[:3], 0.0, 0.75, 5) == [0.0, 0.0, 0.25, 0.25, 0.5]  # N > n repeats, as numpy


def test_the_plan_takes_linspace_for_frame_counts_only() -> None:
    plan = FramePlan.build(num_frames=4, spacing="linspace")
    assert plan.strategy == "linspace" and plan.describe()["strategy"] == "linspace"
    assert (
        FramePlan.build(num_frames=4).describe()["strategy"] == "uniform"
    )  # cache keys of old plans unchanged
    assert plan.targets(0.0, 6.0, frame_times=[i / 4 for i in range(24)]) == [0.0, 1.75, 3.75, 5.75]
    with pytest.raises(SamplingError, match="frame times"):
        plan.targets(0.0, 6.0)
    with pytest.raises(SamplingError, match="num_frames sampling only"):
        FramePlan.build(fps=1.0, spacing="linspace")
