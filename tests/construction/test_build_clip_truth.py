"""The clips the build cut, checked frame by frame against the sample's truth (frame numbers drawn in).

Completeness verification must really lack the removed step; step prediction must stop where the
final step begins; segments must hold their stage; the trimmed Level-3 video must end before the
concluding slide.
"""

from __future__ import annotations

import av
from build_helpers import read_jsonl

from expvid.media.synth import read_frame_code
from expvid.suites.sample import read_truth


def frame_codes(path, *, from_time: float = 0.0) -> list[int]:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        if from_time > 0:
            assert stream.time_base is not None
            container.seek(int(from_time / stream.time_base), stream=stream)
        return [read_frame_code(f.to_ndarray(format="rgb24")) for f in container.decode(stream)]


def _by_key(out, task):
    provenance = {p["item"]: p for p in read_jsonl(out / "provenance.jsonl")}
    for record in read_jsonl(out / f"annotations/level2/{task}.jsonl"):
        yield record, provenance[f"{task}/{record['id']}"]


def _stage(truth, video_id, step_number):
    return next(s for s in truth["experiments"][video_id]["stages"] if step_number in s["steps"])


def test_completeness_verification_clips_lack_exactly_the_removed_steps_frames(sample_build, sample_dir):
    truth = read_truth(sample_dir)
    out = sample_build.out
    checked = 0
    for index, (record, provenance) in enumerate(_by_key(out, "video_verification")):
        if index % 3:
            continue  # six of the eighteen (decoding costs time; the rule is the same for all)
        experiment = truth["experiments"][record["video_id"]]
        removed = provenance["meta"]["removed_step"]
        step = experiment["steps"][removed - 1]
        stage = _stage(truth, record["video_id"], removed)
        # The answer names that step: its local number in the segment's list.
        assert record["options"][record["answer"]] == str(stage["steps"].index(removed) + 1)
        assert removed != stage["steps"][-1]  # never the final step
        got = frame_codes(out / record["video_path"])
        lo, hi = step["frames"]
        assert not any(lo <= code < hi for code in got), (
            f"{record['video_path']} shows frames of step {removed}"
        )
        expected = [*range(stage["frames"][0], lo), *range(hi, stage["frames"][1])]
        assert got == expected
        checked += 1
    assert checked == 6


def test_step_prediction_clips_stop_where_the_final_step_starts(sample_build, sample_dir):
    truth = read_truth(sample_dir)
    for record, _ in _by_key(sample_build.out, "step_prediction"):
        experiment = truth["experiments"][record["video_id"]]
        final = experiment["steps"][int(record["answer"]) - 1]
        stage = _stage(truth, record["video_id"], int(record["answer"]))
        assert frame_codes(sample_build.out / record["video_path"]) == list(
            range(stage["frames"][0], final["frames"][0])
        )
        break  # one is enough: the rule is the same for all, and decoding costs time


def test_segment_clips_hold_their_stage_and_level3_videos_end_before_the_slide(sample_build, sample_dir):
    truth = read_truth(sample_dir)
    segments = read_jsonl(sample_build.out / "segments.jsonl")
    segment = segments[1]
    stage = _stage(truth, segment["video_id"], segment["steps"][0]["number"])
    assert frame_codes(sample_build.out / segment["clip"]) == list(range(*stage["frames"]))
    for row in read_jsonl(sample_build.out / "experiments.jsonl"):
        end = truth["experiments"][row["video_id"]]["procedure_end"]  # first frame of the concluding slide
        path = sample_build.out / row["full_video"]
        tail = frame_codes(path, from_time=end / truth["fps"] - 3.0)
        assert tail[-1] == end - 1 and tail == list(range(tail[0], end))
        with av.open(str(path)) as container:
            assert container.streams.video[0].frames == end
            assert read_frame_code(next(container.decode(video=0)).to_ndarray(format="rgb24")) == 0
