"""Per-item seeds, provider image caps, input-mode checks and ExpVid's Table 3 frame presets."""

from __future__ import annotations

import pytest

from expvid.models import create_backend
from expvid.run.generate import item_seed
from expvid.run.request_settings import apply_image_limit, check_input_mode, sent_summary
from expvid.schema import DataError, Prediction
from expvid.suites.expvid_eval import ExpVidSuite
from expvid.suites.protocol import FrameOptions


def test_item_seeds_are_fixed_by_seed_item_and_sample_alone():
    seeds = {item_seed(0, f"tools/{i}", s) for i in range(50) for s in range(3)}
    assert len(seeds) == 150  # distinct per (item, sample)
    assert all(0 <= seed < 2**31 for seed in seeds if seed is not None)
    assert item_seed(0, "tools/1", 0) == item_seed(0, "tools/1", 0) != item_seed(1, "tools/1", 0)
    assert item_seed(None, "tools/1", 0) is None


def test_a_providers_image_cap_becomes_the_frame_cap(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    claude = create_backend("anthropic:claude-sonnet-4")
    frames, limit = apply_image_limit(FrameOptions(), claude)
    assert frames.max_images == 100 and limit is not None and "100 images" in limit["source"]
    tighter, none = apply_image_limit(FrameOptions(max_images=64), claude)
    assert (tighter.max_images, none) == (64, None)  # the run's own, lower cap stands
    blind_frames, blind_limit = apply_image_limit(
        FrameOptions(), create_backend("blind:anthropic:claude-sonnet-4")
    )
    assert (blind_frames.max_images, blind_limit) == (None, None)  # no image leaves a blind backend


def test_video_runs_are_refused_before_any_item_where_they_cannot_work(monkeypatch):
    with pytest.raises(DataError, match="JPEG"):
        check_input_mode(
            "video", create_backend("openai:m@http://127.0.0.1:9/v1"), FrameOptions(image_format="png")
        )
    check_input_mode("video", create_backend("random"), FrameOptions())  # baselines look at no image
    check_input_mode(
        "images", create_backend("openai:m@http://127.0.0.1:9/v1"), FrameOptions(image_format="png")
    )


def test_sent_summary_counts_values_and_reasons():
    predictions = [
        Prediction(
            item_id="a",
            task="t",
            model="m",
            response="x",
            sent={"temperature": None, "not_sent": {"temperature": "r"}},
        ),
        Prediction(item_id="b", task="t", model="m", response="", refusal="no", sent={"temperature": 0.1}),
        Prediction(item_id="c", task="t", model="m", response="x"),  # made before `sent` existed
    ]
    summary = sent_summary(predictions)
    assert summary == {
        "requests": 2,
        "values": {"temperature": {"none": 1, "0.1": 1}},
        "not_sent": {"temperature": {"r": 1}},
        "refusals": 1,
    }


def test_expvid_frame_presets_follow_table_3():
    suite = ExpVidSuite()
    assert suite.frame_preset("claude-sonnet-4").counts == {"L1": 8, "L2": 32, "L3": 96}
    assert suite.frame_preset("MiMo-VL-7B-RL").counts["L3"] == 512
    assert suite.frame_preset("internvl3.5").counts["L3"] == 256
    with pytest.raises(ValueError, match="claude-sonnet-4"):
        suite.frame_preset("gpt-4o")
