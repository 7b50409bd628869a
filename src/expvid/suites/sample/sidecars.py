"""The candidate-directory sidecars of the sample (docs/build.md "Output: the candidate directory").

With them the sample is a complete candidate directory, as `expvid build` writes one: the platform
shows the Level-2 step editor (segments with timed steps) and the Level-3 paper pane on a first try,
and each clip plays inside its window of the source video. Written from the same plan as the release
files, so windows, steps and items can never disagree with the clips:

- `provenance.jsonl`: per item its source window (`sources/<id>/video.mp4`, start, end, and the span
  removed from completeness-verification clips), the generator as its draft, the segment of Level-2 items;
- `segments.jsonl`: one line per stage that has Level-2 items: its clip, window, timed steps (global
  numbers, seconds of the source video), the experiment's full step list and the items made from it;
- `experiments.jsonl`: title, discipline, duration, the Level-3 video and the source video;
- `papers/<id>.md`: the Introduction, Results and Discussion of the experiment's paper.

Nothing here changes the annotation or video files, which other tests compare byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from expvid.suites.expvid_suite import TASKS
from expvid.suites.sample.layout import GENERATOR, level3_video, segment_clip, source_video
from expvid.suites.sample.plan import ClipSpec, PlannedExperiment
from expvid.suites.sample.release import ReleasePlan
from expvid.suites.sample.sources import markdown_section, markdown_text
from expvid.suites.sample.timeline import FrameRange, Timeline

#: Top-level paths these sidecars occupy (the generator's `--force` removes them too).
SIDECAR_PATHS = ("provenance.jsonl", "segments.jsonl", "experiments.jsonl", "papers")


def _seconds(frames: FrameRange, fps: int) -> tuple[float, float]:
    return round(frames[0] / fps, 3), round(frames[1] / fps, 3)


def _stage_of(clip: ClipSpec, timeline: Timeline) -> int:
    """The stage (1-based) whose steps the clip shows."""
    first = clip.steps[0]
    return next(s for s, numbers in enumerate(timeline.stage_steps, start=1) if first in numbers)


def _source(clip: ClipSpec, timeline: Timeline) -> dict[str, Any]:
    start, end = clip.ranges[0][0], clip.ranges[-1][1]
    source: dict[str, Any] = {"video": source_video(clip.video_id), "start": round(start / timeline.fps, 3),
                              "end": round(end / timeline.fps, 3)}  # fmt: skip
    if clip.removed is not None and start <= clip.removed[0] and clip.removed[1] <= end:
        source["removed"] = [list(_seconds(clip.removed, timeline.fps))]
    return source


def _step(number: int, text: str, timeline: Timeline) -> dict[str, Any]:
    start, end = _seconds(timeline.steps[number - 1], timeline.fps)
    return {"number": number, "text": text, "start": start, "end": end}


def _paper(experiment: PlannedExperiment) -> str:
    script = experiment.script
    lines = [f"# {script.title}", "", *markdown_section("# Introduction", [script.introduction])]
    lines += markdown_section("# Results", script.results)
    lines += markdown_section("# Discussion", script.discussion)
    return markdown_text(lines)


def _jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8", newline="\n")


def write_sidecars(root: Path, experiments: Sequence[PlannedExperiment], plan: ReleasePlan) -> None:
    """Write the sidecars of the kept `experiments` whose items `plan` holds."""
    by_id = {experiment.video_id: experiment for experiment in experiments}
    clips = {clip.path: clip for clip in plan.clips}
    provenance: list[dict[str, Any]] = []
    segment_items: dict[tuple[str, int], list[str]] = {}
    for task, records in plan.records.items():
        level = TASKS[task].level
        for record in records:
            key = f"{task}/{record['id']}"
            clip = clips[record["video_path"]]
            experiment = by_id[clip.video_id]
            line: dict[str, Any] = {
                "item": key,
                "task": task,
                "video_id": clip.video_id,
                "source": _source(clip, experiment.timeline),
                "drafts": [{"stage": f"level{level}", "model": GENERATOR, "prompt_id": "sample_script"}],
                "flags": [],
            }
            if level == 2:
                stage = _stage_of(clip, experiment.timeline)
                line["segment_id"] = f"{clip.video_id}/stage_{stage}"
                segment_items.setdefault((clip.video_id, stage), []).append(key)
            provenance.append(line)
    _jsonl(root / "provenance.jsonl", provenance)

    segments = []
    for experiment in experiments:
        script, timeline = experiment.script, experiment.timeline
        full = [step.text for step in script.steps]
        for stage, numbers in enumerate(timeline.stage_steps, start=1):
            keys = segment_items.get((experiment.video_id, stage))
            if not keys:
                continue
            start, end = _seconds(timeline.stages[stage - 1], timeline.fps)
            segment_path = segment_clip(experiment.video_id, stage)
            segments.append(
                {
                    "segment_id": f"{experiment.video_id}/stage_{stage}",
                    "video_id": experiment.video_id,
                    "clip": segment_path if segment_path in clips else None,
                    "start": start,
                    "end": end,
                    "title": script.stages[stage - 1].name,
                    "steps": [_step(n, full[n - 1], timeline) for n in numbers],
                    "full_step_list": full,
                    "items": keys,
                }
            )
    _jsonl(root / "segments.jsonl", segments)

    _jsonl(
        root / "experiments.jsonl",
        [
            {
                "video_id": experiment.video_id,
                "title": experiment.script.title,
                "discipline": experiment.script.discipline,
                "duration": round(experiment.timeline.duration, 3),
                "full_video": level3_video(experiment.video_id),
                "source_video": source_video(experiment.video_id),
            }
            for experiment in experiments
        ],
    )
    papers = root / "papers"
    papers.mkdir(parents=True, exist_ok=True)
    for experiment in experiments:
        (papers / f"{experiment.video_id}.md").write_text(_paper(experiment), encoding="utf-8", newline="\n")
