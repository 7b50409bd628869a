"""The truth sidecar `sample_truth.json`: what every generated file really contains.

For each clip: the source frame ranges it holds (in order), the steps shown, and for clips with a
step cut out, the removed range. For each experiment: step, stage and slide ranges, and whether
curation should keep it. Tests decode clips and compare their frame codes with this file; build
tests compare detected boundaries with it. It lives at the dataset root, outside `annotations/`,
so a loader never mistakes it for a task. It doubles as the marker that a directory holds a
sample (so `--force` never deletes anything it did not write).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from expvid.suites.sample.layout import FPS, GENERATOR, HEIGHT, TRUTH_FILE, TRUTH_FORMAT, WIDTH, source_video
from expvid.suites.sample.plan import PlannedExperiment
from expvid.suites.sample.release import ReleasePlan


def build_truth(seed: int, experiments: list[PlannedExperiment], plan: ReleasePlan) -> dict[str, Any]:
    return {
        **_header(seed, complete=True),
        "fps": FPS,
        "width": WIDTH,
        "height": HEIGHT,
        "experiments": {experiment.video_id: _experiment(experiment) for experiment in experiments},
        "clips": {
            clip.path: {
                "video_id": clip.video_id,
                "source": source_video(clip.video_id),
                "kind": clip.kind,
                "ranges": [list(r) for r in clip.ranges],
                "n_frames": clip.n_frames,
                "steps": list(clip.steps),
                "removed": list(clip.removed) if clip.removed else None,
                "removed_step": clip.removed_step,
            }
            for clip in plan.clips
        },
    }


def _experiment(experiment: PlannedExperiment) -> dict[str, Any]:
    script, timeline = experiment.script, experiment.timeline
    stage_of_step = {n: s for s, numbers in enumerate(timeline.stage_steps, start=1) for n in numbers}
    gap = script.transcript_gap_stage
    return {
        "title": script.title,
        "discipline": script.discipline,
        "curation": script.curation,
        "reject_reason": script.reject_reason or None,
        "source_video": source_video(script.video_id),
        "n_frames": timeline.n_frames,
        "duration": round(timeline.duration, 3),
        "procedure_end": timeline.procedure_end,
        "slide": list(timeline.slide),
        "transcript_gap": list(timeline.stages[gap - 1]) if gap else None,
        "stages": [
            {"number": s, "name": stage.name, "frames": list(timeline.stages[s - 1]), "steps": list(numbers)}
            for s, (stage, numbers) in enumerate(
                zip(script.stages, timeline.stage_steps, strict=True), start=1
            )
        ],
        "steps": [
            {"number": n, "stage": stage_of_step[n], "text": step.text, "frames": list(timeline.steps[n - 1])}
            for n, step in enumerate(script.steps, start=1)
        ],
    }


def _header(seed: int, *, complete: bool) -> dict[str, Any]:
    return {"generator": GENERATOR, "format": TRUTH_FORMAT, "complete": complete, "seed": seed}


def write_truth(root: Path, truth: dict[str, Any]) -> None:
    text = json.dumps(truth, indent=1, ensure_ascii=False) + "\n"
    (root / TRUTH_FILE).write_text(text, encoding="utf-8", newline="\n")


def write_marker(root: Path, seed: int) -> None:
    """Claim the directory before writing anything else, so an interrupted run is still ours."""
    write_truth(root, _header(seed, complete=False))


def read_truth(root: Path) -> dict[str, Any]:
    """The sidecar of a generated sample; `ValueError` naming the file if it is not one."""
    path = Path(root) / TRUTH_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable sample truth file ({exc})") from None
    if not isinstance(data, dict) or data.get("generator") != GENERATOR:
        raise ValueError(f"{path}: not written by the expvid sample generator")
    return data


def is_sample_dir(root: Path) -> bool:
    try:
        read_truth(root)
    except ValueError:
        return False
    return True
