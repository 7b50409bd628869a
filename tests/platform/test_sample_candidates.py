"""The bundled sample is a complete candidate directory, and its sidecars agree with its truth file."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from expvid.platform.services.importer import parse_directory
from expvid.suites.sample import make_sample, read_truth


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_sidecars_match_the_clips_the_truth_file_records(tmp_path: Path) -> None:
    root = tmp_path / "sample"
    make_sample(root, render_videos=False)
    truth = read_truth(root)
    fps = truth["fps"]
    records = {
        f"{path.stem}/{record['id']}": record
        for path in (root / "annotations").rglob("*.jsonl")
        for record in _jsonl(path)
    }
    provenance = {line["item"]: line for line in _jsonl(root / "provenance.jsonl")}
    assert set(provenance) == set(records)
    for key, line in provenance.items():
        clip = truth["clips"][records[key]["video_path"]]
        assert line["source"]["video"] == clip["source"]
        assert line["source"]["start"] == round(clip["ranges"][0][0] / fps, 3)
        assert line["source"]["end"] == round(clip["ranges"][-1][1] / fps, 3)
        inside = clip["removed"] and clip["ranges"][0][0] <= clip["removed"][0] < clip["ranges"][-1][1]
        if inside:  # a step cut from the middle of the window is named, so the player can skip it
            assert line["source"]["removed"] == [[round(f / fps, 3) for f in clip["removed"]]]
        else:
            assert "removed" not in line["source"]

    segments = {line["segment_id"]: line for line in _jsonl(root / "segments.jsonl")}
    level2 = {k for k in records if k.split("/")[0] in ("sequence_ordering", "sequence_generation",
                                                          "video_verification", "step_prediction")}  # fmt: skip
    assert {provenance[k]["segment_id"] for k in level2} == set(segments)
    assert sorted(k for s in segments.values() for k in s["items"]) == sorted(level2)
    for segment in segments.values():
        experiment = truth["experiments"][segment["video_id"]]
        assert segment["full_step_list"] == [s["text"] for s in experiment["steps"]]
        times = [(s["start"], s["end"]) for s in segment["steps"]]
        assert segment["start"] == times[0][0] and segment["end"] == times[-1][1]
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(times))  # in order, no overlap
        for step in segment["steps"]:
            assert experiment["steps"][step["number"] - 1]["text"] == step["text"]
        for key in segment["items"]:  # the answers are step numbers of this very segment
            if key.startswith("sequence_generation/"):
                assert [int(a) for a in records[key]["answer"]] == [s["number"] for s in segment["steps"]]

    experiments = _jsonl(root / "experiments.jsonl")
    assert {e["video_id"] for e in experiments} == {s["video_id"] for s in segments.values()}
    for experiment in experiments:
        paper = (root / "papers" / f"{experiment['video_id']}.md").read_text(encoding="utf-8")
        assert "# Results" in paper and "# Discussion" in paper and "# Introduction" in paper
    _items, parsed, _, report = parse_directory(root)
    # Only the videos are missing (not rendered here); everything the sidecars say checks out.
    assert {p.message.split(":")[0] for p in report.problems} == {"video file not found"}
    assert len(parsed) == len(segments)  # (with videos, the round-trip test imports it without a warning)
