"""Raw sources for the build pipeline: transcripts, papers, meta, and experiments to reject."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import srt

from expvid.suites.sample.scripts import load_scripts

SECTIONS = ["## Abstract", "## Introduction", "## Methods", "## Results", "## Discussion"]


def _cues(sample_dir: Path, video_id: str) -> list[srt.Subtitle]:
    text = (sample_dir / "sources" / video_id / "transcript.srt").read_text(encoding="utf-8")
    return list(srt.parse(text))


def _max_gap(cues: list[srt.Subtitle]) -> float:
    return max((b.start - a.end).total_seconds() for a, b in itertools.pairwise(cues))


def test_every_experiment_has_its_four_source_files(sample_dir: Path, sample_truth: dict[str, Any]) -> None:
    assert set(sample_truth["experiments"]) == {p.name for p in (sample_dir / "sources").iterdir()}
    for video_id, experiment in sample_truth["experiments"].items():
        folder = sample_dir / "sources" / video_id
        assert sorted(p.name for p in folder.iterdir()) == [
            "meta.json",
            "paper.md",
            "transcript.srt",
            "video.mp4",
        ]
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        assert meta == {
            "id": video_id,
            "title": experiment["title"],
            "discipline": experiment["discipline"],
            "duration": experiment["duration"],
        }
        paper = (folder / "paper.md").read_text(encoding="utf-8")
        assert paper.startswith(f"# {experiment['title']}\n")
        positions = [paper.index(f"\n{heading}\n") for heading in SECTIONS]
        assert positions == sorted(positions)
        for step in experiment["steps"]:  # the Methods section is the protocol
            assert f"\n{step['number']}. {step['text']}\n" in paper


def test_transcripts_are_realistic_narration(sample_dir: Path, sample_truth: dict[str, Any]) -> None:
    scripts = {script.video_id: script for script in load_scripts()}
    all_text = ""
    mid_sentence_breaks = 0
    for video_id, experiment in sample_truth["experiments"].items():
        cues = _cues(sample_dir, video_id)
        assert [cue.index for cue in cues] == list(range(1, len(cues) + 1))
        assert all(cue.start < cue.end for cue in cues)
        assert all(a.end <= b.start for a, b in itertools.pairwise(cues))
        assert cues[-1].end.total_seconds() <= experiment["duration"]
        text = " ".join(cue.content for cue in cues)
        all_text += text + " "
        mid_sentence_breaks += sum(1 for cue in cues if not re.search(r"[.!?]$", cue.content))
        if experiment["transcript_gap"] is None:  # nothing lost: cues join back into the narration
            script = scripts[video_id]
            narration = " ".join([*(step.narration for step in script.steps), script.slide_narration])
            assert text == narration
            # Each step's narration is spoken during that step.
            first_step = experiment["steps"][0]["frames"]
            assert cues[0].start.total_seconds() >= first_step[0] / sample_truth["fps"]
    assert mid_sentence_breaks >= 10
    for abbreviation in ("e.g.", "i.e.", "Fig. 2", "0.1 M", "0.5 mM"):
        assert abbreviation in all_text, abbreviation


def test_sources_include_experiments_curation_must_reject(
    sample_dir: Path, sample_truth: dict[str, Any], raw_records: dict[str, list[dict[str, Any]]]
) -> None:
    experiments = sample_truth["experiments"]
    rejected = {vid: e for vid, e in experiments.items() if e["curation"] == "reject"}
    kept = {vid: e for vid, e in experiments.items() if e["curation"] == "keep"}
    assert {e["reject_reason"] for e in rejected.values()} == {"video too short", "transcript gap"}
    released = {record["video_id"] for records in raw_records.values() for record in records}
    assert released == set(kept)  # rejected experiments have sources only

    for e in kept.values():
        assert 120 <= e["duration"] <= 240  # 2-4 minutes, concluding slide included
        assert e["reject_reason"] is None
    short = next(vid for vid, e in rejected.items() if e["reject_reason"] == "video too short")
    assert experiments[short]["duration"] < 60

    gap_id = next(vid for vid, e in rejected.items() if e["reject_reason"] == "transcript gap")
    gap_start, gap_end = experiments[gap_id]["transcript_gap"]
    gap_cues = _cues(sample_dir, gap_id)
    fps = sample_truth["fps"]
    assert _max_gap(gap_cues) >= (gap_end - gap_start) / fps >= 25
    assert not [c for c in gap_cues if gap_start / fps <= c.start.total_seconds() < gap_end / fps]
    assert experiments[gap_id]["duration"] >= 120  # long enough: only the gap should fail it
    for video_id in kept:
        assert _max_gap(_cues(sample_dir, video_id)) < 3
