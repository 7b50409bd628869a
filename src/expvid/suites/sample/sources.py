"""The raw sources the build pipeline starts from: `sources/<video_id>/{video.mp4, transcript.srt,
paper.md, meta.json}` (the video itself is written by `videos.py`).

The transcript is meant to be realistic enough to exercise sentence segmentation: one or two
sentences per step, long narrations split over two cues at a word boundary near the middle (so
cues break mid-sentence), and the lab abbreviations authored in the scripts ("0.1 M", "e.g.",
"Fig. 2"). A script can leave one stage unnarrated, the continuity failure curation must reject.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import srt

from expvid.suites.sample.layout import source_dir
from expvid.suites.sample.scripts import ExperimentScript
from expvid.suites.sample.timeline import FrameRange, Timeline

#: Narrations longer than this are split over two cues.
CUE_SPLIT_CHARS = 80
_LEAD_IN, _LEAD_OUT = 0.25, 0.25


def write_sources(root: Path, script: ExperimentScript, timeline: Timeline) -> None:
    folder = root / source_dir(script.video_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "transcript.srt").write_text(transcript_srt(script, timeline), encoding="utf-8", newline="\n")
    (folder / "paper.md").write_text(paper_markdown(script), encoding="utf-8", newline="\n")
    meta = {
        "id": script.video_id,
        "title": script.title,
        "discipline": script.discipline,
        "duration": round(timeline.duration, 3),
    }
    (folder / "meta.json").write_text(
        json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n"
    )


def transcript_srt(script: ExperimentScript, timeline: Timeline) -> str:
    cues: list[srt.Subtitle] = []
    stage_of_step = [s for s, numbers in enumerate(timeline.stage_steps, start=1) for _ in numbers]
    for number, step in enumerate(script.steps, start=1):
        if stage_of_step[number - 1] == script.transcript_gap_stage:
            continue
        cues.extend(_cues(step.narration, timeline.steps[number - 1], timeline.fps))
    cues.extend(_cues(script.slide_narration, timeline.slide, timeline.fps))
    return str(srt.compose(cues, reindex=True))


def _cues(text: str, frames: FrameRange, fps: int) -> list[srt.Subtitle]:
    start = frames[0] / fps + _LEAD_IN
    end = frames[1] / fps - _LEAD_OUT
    parts = _split(text) if len(text) > CUE_SPLIT_CHARS else [text]
    total = sum(len(part) for part in parts)
    cues, cursor = [], start
    for part in parts:
        stop = cursor + (end - start) * len(part) / total
        cues.append(srt.Subtitle(index=0, start=_time(cursor), end=_time(stop), content=part))
        cursor = stop
    return cues


def _split(text: str) -> list[str]:
    """Two halves at the space nearest the middle: wherever that falls, as caption tools do."""
    middle = len(text) // 2
    spaces = [i for i, char in enumerate(text) if char == " "]
    cut = min(spaces, key=lambda i: (abs(i - middle), i))
    return [text[:cut], text[cut + 1 :]]


def _time(seconds: float) -> timedelta:
    return timedelta(milliseconds=round(seconds * 1000))


def markdown_section(heading: str, paragraphs: Sequence[str]) -> list[str]:
    """A markdown section's lines: its heading, then its paragraphs, each followed by a blank line."""
    lines = [heading, ""]
    for paragraph in paragraphs:
        lines += [paragraph, ""]
    return lines


def markdown_text(lines: Sequence[str]) -> str:
    """Markdown lines as one text ending in a single newline."""
    return "\n".join(lines).rstrip("\n") + "\n"


def paper_markdown(script: ExperimentScript) -> str:
    """The paper: Abstract, Introduction, Methods (the protocol), Results, Discussion."""
    lines = [f"# {script.title}", "", *markdown_section("## Abstract", [script.abstract])]
    lines += [*markdown_section("## Introduction", [script.introduction]), "## Methods", ""]
    number = 0
    for stage_number, stage in enumerate(script.stages, start=1):
        lines += [f"### {stage_number}. {stage.name}", ""]
        for step in stage.steps:
            number += 1
            lines.append(f"{number}. {step.text}")
        lines.append("")
    lines += markdown_section("## Results", script.results)
    lines += markdown_section("## Discussion", script.discussion)
    return markdown_text(lines)
