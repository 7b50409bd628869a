"""Decoded sample videos hold exactly the source frames the truth sidecar says (PyAV + frame codes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import av
import pytest
from av.video.frame import PictureType

from expvid.media.synth import read_frame_code


def _decode(path: Path, read_at: set[int] | None = None) -> tuple[int, dict[int, int], set[str]]:
    """(frames decoded, {position: frame code} at `read_at` (all if None), picture types seen)."""
    codes: dict[int, int] = {}
    kinds: set[str] = set()
    count = 0
    with av.open(str(path)) as container:
        for position, frame in enumerate(container.decode(video=0)):
            count += 1
            kinds.add(PictureType(frame.pict_type).name)
            if read_at is None or position in read_at:
                codes[position] = read_frame_code(frame.to_ndarray(format="rgb24"))
    return count, codes, kinds


def _expected(clip: dict[str, Any]) -> list[int]:
    return [index for start, end in clip["ranges"] for index in range(start, end)]


def test_every_clip_has_exactly_its_source_frames(sample_dir: Path, sample_truth: dict[str, Any]) -> None:
    """All clips: frame count, and codes at both sides of every cut plus every 9th frame."""
    clips = {path: clip for path, clip in sample_truth["clips"].items() if clip["kind"] != "level_3"}
    assert {clip["kind"] for clip in clips.values()} == {"level_1", "segment", "verification", "prediction"}
    for path, clip in clips.items():
        expected = _expected(clip)
        checks = {0, len(expected) - 1, *range(0, len(expected), 9)}
        offset = 0
        for start, end in clip["ranges"]:
            checks |= {offset - 1, offset} if offset else set()
            offset += end - start
        count, codes, _ = _decode(sample_dir / path, checks)
        assert count == len(expected) == clip["n_frames"], path
        assert codes == {p: expected[p] for p in checks}, path


def test_removed_step_clips_lack_the_removed_frames(sample_dir: Path, sample_truth: dict[str, Any]) -> None:
    removed_clips = [(p, c) for p, c in sample_truth["clips"].items() if c["removed"] is not None]
    assert {c["kind"] for _, c in removed_clips} == {"verification", "prediction"}
    verification = [(p, c) for p, c in removed_clips if c["kind"] == "verification"]
    for path, clip in [
        *verification[:2],
        *[(p, c) for p, c in removed_clips if c["kind"] == "prediction"][:1],
    ]:
        _, codes, kinds = _decode(sample_dir / path)
        seen = list(codes.values())
        start, end = clip["removed"]
        assert seen == _expected(clip), path
        assert not [code for code in seen if start <= code < end], path
        step = sample_truth["experiments"][clip["video_id"]]["steps"][clip["removed_step"] - 1]
        assert step["frames"] == [start, end]
        stages = sample_truth["experiments"][clip["video_id"]]["stages"]
        stage_start = next(s["frames"][0] for s in stages if clip["removed_step"] in s["steps"])
        if clip["kind"] == "verification" and start == stage_start:  # the stage's first step is cut
            assert seen[0] == end
        elif clip["kind"] == "verification":  # a cut in the middle: the frames jump over the step
            assert seen.index(end) == seen.index(start - 1) + 1
        else:  # the final step is cut: the clip stops right before it
            assert seen[-1] == start - 1
        assert "B" in kinds  # these clips are encoded with B-frames


def test_level3_videos_are_a_few_minutes_without_the_slide(
    sample_dir: Path, sample_truth: dict[str, Any]
) -> None:
    level3 = {p: c for p, c in sample_truth["clips"].items() if c["kind"] == "level_3"}
    assert len(level3) == len([e for e in sample_truth["experiments"].values() if e["curation"] == "keep"])
    for path, clip in level3.items():
        experiment = sample_truth["experiments"][clip["video_id"]]
        with av.open(str(sample_dir / path)) as container:
            stream = container.streams.video[0]
            assert stream.duration is not None and stream.time_base is not None
            seconds = float(stream.duration * stream.time_base)
        assert 120 <= seconds <= 240, (path, seconds)  # 2-4 minutes
        assert seconds == pytest.approx(experiment["procedure_end"] / sample_truth["fps"], abs=0.15)
    path = next(iter(level3))
    count, codes, _ = _decode(sample_dir / path, {0, level3[path]["n_frames"] - 1})
    end = sample_truth["experiments"][level3[path]["video_id"]]["procedure_end"]
    assert count == end
    assert codes == {0: 0, end - 1: end - 1}  # decodes from frame 0 up to just before the slide


def test_source_videos_hold_the_whole_experiment(sample_dir: Path, sample_truth: dict[str, Any]) -> None:
    for video_id, experiment in sample_truth["experiments"].items():
        meta = json.loads((sample_dir / "sources" / video_id / "meta.json").read_text(encoding="utf-8"))
        assert meta["duration"] == experiment["duration"]
        with av.open(str(sample_dir / experiment["source_video"])) as container:
            stream = container.streams.video[0]
            assert stream.frames == experiment["n_frames"]
            assert (stream.width, stream.height) == (sample_truth["width"], sample_truth["height"])
    video_id, experiment = next(iter(sample_truth["experiments"].items()))
    last = experiment["n_frames"] - 1
    slide_start = experiment["slide"][0]
    count, codes, kinds = _decode(sample_dir / experiment["source_video"], {0, slide_start, last})
    assert count == experiment["n_frames"]
    assert codes == {0: 0, slide_start: slide_start, last: last}  # the slide is in the source
    assert "B" not in kinds  # required for the stream-copied Level-3 trim
