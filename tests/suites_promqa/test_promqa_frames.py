"""ProMQA's frames: 1 fps from 0 to end_time, thinned from the END so the last frame is always kept."""

from __future__ import annotations

import io
import itertools
import math

import numpy as np
from PIL import Image

from expvid.media.plan import keep_last_pick
from expvid.media.sampler import sample_with_settings
from expvid.media.synth import read_frame_code
from expvid.suites.promqa import ProMQASuite
from expvid.suites.promqa.sample import FPS
from expvid.suites.protocol import FrameOptions


def official_pick(n: int, max_frames: int) -> list[int]:
    """formats.md's rule: rate = ceil(n / max_frames) above the cap; keep n-1, n-1-rate, ... down to 0."""
    rate = math.ceil(n / max_frames) if n > max_frames else 1
    return [i for i in range(n) if (n - 1 - i) % rate == 0]


def test_thinning_matches_the_official_rule() -> None:
    for n in range(1, 120):
        for cap in (1, 2, 3, 7, 10, 50, 250):
            assert keep_last_pick(n, cap) == official_pick(n, cap), (n, cap)
    picked = keep_last_pick(700, 250)  # the official comment's example: rate 3
    assert picked[-1] == 699 and picked[0] == 0 and len(picked) == 234
    assert math.ceil(700 / 250) == 3 and all(b - a == 3 for a, b in itertools.pairwise(picked))


def test_sampler_settings(promqa_dataset) -> None:
    suite = ProMQASuite()
    item = promqa_dataset.items[0]
    default = suite.sampler(item, FrameOptions())
    assert default is not None
    assert (default.strategy, default.fps, default.max_frames) == ("fps_keep_last", 1.0, 50)
    capped = suite.sampler(item, FrameOptions(max_frames=10, max_images=7))
    assert capped is not None and capped.max_frames == 7


def test_frames_sent_are_the_thinned_prefix_ending_at_end_time(promqa_dataset) -> None:
    item = next(i for i in promqa_dataset.items if i.id == "1_10_3_measurement")  # end_time 00:00:25
    settings = ProMQASuite().sampler(item, FrameOptions(max_frames=7))
    assert settings is not None and item.media is not None
    sampled = sample_with_settings(
        item.media.path, settings, start=item.media.start, end=item.media.end, cache=False
    )
    seconds = [round(frame.time) for frame in sampled.frames]
    assert seconds == [0, 4, 8, 12, 16, 20, 24]  # 25 one-second frames, rate ceil(25/7) = 4, last kept
    codes = [
        read_frame_code(np.asarray(Image.open(io.BytesIO(f.data)).convert("RGB"))) for f in sampled.frames
    ]
    assert codes == [FPS * s for s in seconds]  # the frame on screen at each second, nothing after end_time
