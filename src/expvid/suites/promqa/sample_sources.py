"""Inputs for `expvid build --recipe promqa`, in CaptainCook4D's published layout, with coded video.

`write_sample_sources(DIR)` writes what a lab would have after recording and annotating:

    DIR/annotation_json/error_annotations.json        CaptainCook4D's step + error annotations
    DIR/annotation_json/complete_step_annotations.json  the same with activity names
    DIR/annotation_json/{activity_idx_step_idx, recording_id_step_idx, step_idx_description,
                         error_category_idx}.json
    DIR/task_graphs/<activity, lower case, no spaces>.json   recipe graphs {steps, edges}
    DIR/videos/<recording_id>.mp4                      recordings, every frame carrying its number

Two recipes (one repeats two step texts, as CaptainCook4D's Dressed Up Meatballs does) and six
recordings exercise every rule of the recipe: all eight question types, clean and noisy prefixes,
a skipped step (times -1 and a "Missing Step" error), modified descriptions, a step that overlaps
the next one, a first step too short for a prefix, a step performed twice, and one recording whose
steps are listed out of time order. Frames are `scene_frame`s at 4 fps, so the frame shown at
second t carries code floor(4t): a test reads which frames a prefix clip holds.
`SAMPLE_TRUTH` (`truth.json`) lists each recording's steps with their times and frames.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.media.synth import scene_frame, write_video

WIDTH, HEIGHT, FPS = 160, 96, 4
TRUTH_FILE = "truth.json"

RECIPES: dict[int, tuple[str, dict[int, str], list[tuple[int, int]]]] = {
    1: (
        "Spiced Cocoa",
        {
            0: "START",
            1: "Fill-Fill a microwave-safe mug with milk",
            2: "Microwave-Microwave the mug for 30 seconds",
            3: "Add-Add 1 teaspoon of cocoa powder to the mug",
            4: "Add-Add a pinch of cinnamon to the mug",
            5: "Stir-Stir the contents with a spoon",
            6: "Microwave-Microwave the mug for 30 seconds",
            7: "Stir-Stir the contents with a spoon",
            8: "END",
        },
        [(5, 6), (0, 1), (1, 2), (2, 3), (2, 4), (3, 5), (4, 5), (6, 7), (7, 8)],
    ),
    2: (
        "Cucumber Yogurt Bowl",
        {
            0: "START",
            1: "Rinse-Rinse 1 cucumber",
            2: "Slice-Slice the cucumber into thin rounds",
            3: "Whisk-Whisk 1 cup of yogurt in a bowl",
            4: "Add-Add the cucumber to the yogurt",
            5: "Season-Season with 1/4 teaspoon of salt",
            6: "END",
        },
        [(0, 1), (1, 2), (0, 3), (2, 4), (3, 4), (4, 5), (5, 6)],
    ),
}


@dataclass(frozen=True)
class Action:
    """One annotated step: recipe text, times (None = skipped), errors, modified description."""

    text: str
    start: float | None
    end: float | None
    errors: tuple[tuple[str, str], ...] = ()
    modified: str | None = None


def _a(
    text: str, start: float | None, end: float | None, *errors: tuple[str, str], modified: str | None = None
) -> Action:
    return Action(text, start, end, tuple(errors), modified)


R1, R2 = RECIPES[1][1], RECIPES[2][1]

#: recording id -> (activity id, actions in the order written to the file).
RECORDINGS: dict[str, tuple[int, list[Action]]] = {
    # Clean, in recipe order, starting late enough for a START prefix; the two repeated texts
    # (microwave, stir) each occur twice.
    "1_1": (1, [
        _a(R1[1], 6.0, 12.0),
        _a(R1[2], 13.0, 20.0),
        _a(R1[3], 21.0, 27.0),
        _a(R1[4], 28.0, 33.0),
        _a(R1[5], 34.0, 40.0),
        _a(R1[2], 41.0, 47.0),
        _a(R1[5], 48.0, 54.0),
    ]),
    # Errors of four kinds and a skipped cinnamon step.
    "1_2": (1, [
        _a(R1[1], 1.0, 7.0, ("Technique Error", "Spilled milk on the counter while filling"),
           modified="Fill-Fill a microwave-safe mug with milk and spill some"),
        _a(R1[2], 8.0, 15.0, ("Timing Error", "Microwaved for 90 seconds instead of 30 seconds"),
           modified="Microwave-Microwave the mug for 90 seconds"),
        _a(R1[3], 16.0, 22.0, ("Measurement Error", "Added a tablespoon of cocoa instead of a teaspoon"),
           modified="Add-Add 1 tablespoon of cocoa powder to the mug"),
        _a(R1[4], None, None, ("Missing Step", "Skipped this step"), modified="Skipped this step"),
        _a(R1[5], 23.0, 29.0),
        _a(R1[2], 30.0, 36.0, ("Temperature Error", "Set the microwave to low power instead of high"),
           modified="Microwave-Microwave the mug on low power for 30 seconds"),
        _a(R1[5], 37.0, 43.0),
    ]),
    # Order error (cinnamon before microwaving); the stir overlaps the step before it; listed out of order.
    "1_3": (1, [
        _a(R1[1], 1.0, 7.0),
        _a(R1[2], 14.0, 21.0),
        _a(R1[4], 8.0, 13.0, ("Order Error", "Added cinnamon before microwaving the milk"),
           modified="Add-Add a pinch of cinnamon to the cold milk"),
        _a(R1[3], 22.0, 28.0),
        _a(R1[5], 29.0, 36.0),
        _a(R1[2], 33.0, 41.0),
        _a(R1[5], 42.0, 48.0),
    ]),
    # The first step ends before 5 s: no prefix ends there (B.1).
    "2_1": (2, [
        _a(R2[3], 1.0, 4.5),
        _a(R2[1], 10.0, 16.0),
        _a(R2[2], 17.0, 25.0),
        _a(R2[4], 26.0, 31.0),
        _a(R2[5], 32.0, 37.0),
    ]),
    # Preparation and order errors, a missing whisk, and a technique error.
    "2_2": (2, [
        _a(R2[1], 1.0, 7.0),
        _a(R2[2], 8.0, 15.0, ("Technique Error", "Cut the cucumber into thick chunks instead of thin rounds"),
           modified="Slice-Cut the cucumber into thick chunks"),
        _a(R2[3], None, None, ("Missing Step", "Skipped this step"), modified="Skipped this step"),
        _a(R2[4], 16.0, 22.0, ("Order Error", "Added the cucumber before the yogurt was whisked"),
           ("Preparation Error", "Used unwhisked yogurt straight from the tub"),
           modified="Add-Add the cucumber to unwhisked yogurt"),
        _a(R2[5], 23.0, 29.0, ("Preparation Error", "Seasoned with pepper instead of salt"),
           ("Measurement Error", "Used a tablespoon of pepper"),
           modified="Season-Season with 1 tablespoon of pepper"),
    ]),
    # Rinsing is done twice (the second time makes no example: its ids would repeat).
    "2_3": (2, [
        _a(R2[1], 5.5, 11.0),
        _a(R2[3], 12.0, 18.0),
        _a(R2[2], 19.0, 25.0, ("Timing Error", "Sliced before rinsing was finished"),
           modified="Slice-Slice the cucumber while it is still wet"),
        _a(R2[1], 26.0, 30.0),
        _a(R2[4], 31.0, 36.0),
        _a(R2[5], 37.0, 43.0, ("Temperature Error", "Seasoned the bowl while it was warm"),
           modified="Season-Season the warm bowl with 1/4 teaspoon of salt"),
    ]),
}  # fmt: skip


@dataclass
class SampleSources:
    root: Path
    recordings: int
    steps: int
    frames: int
    files: list[str] = field(default_factory=list)


def _global_ids() -> dict[str, int]:
    """CaptainCook4D's global step ids: one per distinct step text, numbered across recipes."""
    ids: dict[str, int] = {}
    for _activity, (_name, steps, _edges) in sorted(RECIPES.items()):
        for _number, text in sorted(steps.items()):
            if text not in ("START", "END"):
                ids.setdefault(text, 100 + len(ids) + 1)
    return ids


def _step_record(action: Action, step_id: int) -> dict[str, Any]:
    start = -1.0 if action.start is None else action.start
    end = -1.0 if action.end is None else action.end
    record: dict[str, Any] = {"description": action.text, "step_id": step_id}
    if action.errors:
        record["errors"] = [{"tag": tag, "description": text} for tag, text in action.errors]
    record["start_time"] = start
    record["end_time"] = end
    if action.modified is not None:
        record["modified_description"] = action.modified
    return record


def _dump(path: Path, value: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")


def recording_seconds(actions: list[Action]) -> float:
    return max(a.end for a in actions if a.end is not None) + 2.0


def write_sample_sources(root: Path | str, seed: int = 0) -> SampleSources:
    """Write the sources under `root` (created); returns what was written."""
    base = Path(root)
    ids = _global_ids()
    errors_file: list[dict[str, Any]] = []
    complete: dict[str, Any] = {}
    per_recording: dict[str, list[int]] = {}
    truth: dict[str, Any] = {"fps": FPS, "recordings": {}}
    frames = 0
    for number, (recording_id, (activity, actions)) in enumerate(RECORDINGS.items()):
        steps = [_step_record(a, ids[a.text]) for a in actions]
        errors_file.append(
            {
                "recording_id": recording_id,
                "activity_id": activity,
                "is_error": any(a.errors for a in actions),
                "step_annotations": steps,
            }
        )
        complete[recording_id] = {
            "recording_id": recording_id,
            "activity_id": activity,
            "activity_name": RECIPES[activity][0],
            "person_id": 1 + number % 3,
            "environment": 1,
            "steps": [
                {
                    "step_id": s["step_id"],
                    "start_time": s["start_time"],
                    "end_time": s["end_time"],
                    "description": s["description"],
                    "has_errors": "errors" in s,
                }
                for s in steps
            ],
        }
        per_recording[recording_id] = [s["step_id"] for s in steps]
        seconds = recording_seconds(actions)
        count = int(seconds * FPS)
        frames += count
        video = base / "videos" / f"{recording_id}.mp4"
        images = (scene_frame(i, WIDTH, HEIGHT, seed=seed + number, fps=FPS) for i in range(count))
        write_video(video, images, fps=FPS, preset="ultrafast", threads=1)
        truth["recordings"][recording_id] = {
            "activity_id": activity,
            "seconds": seconds,
            "frames": count,
            "steps": [{"text": a.text, "start": a.start, "end": a.end} for a in actions],
        }
    _dump(base / "annotation_json" / "error_annotations.json", errors_file)
    _dump(base / "annotation_json" / "complete_step_annotations.json", complete)
    _dump(base / "annotation_json" / "recording_id_step_idx.json", per_recording)
    _dump(
        base / "annotation_json" / "activity_idx_step_idx.json",
        {
            str(activity): [
                i for rec, (act, _) in RECORDINGS.items() if act == activity for i in per_recording[rec]
            ]
            for activity in RECIPES
        },
    )
    _dump(base / "annotation_json" / "step_idx_description.json", {str(v): k for k, v in ids.items()})
    _dump(
        base / "annotation_json" / "error_category_idx.json",
        {
            tag: i
            for i, tag in enumerate(
                ("Preparation Error", "Measurement Error", "Order Error", "Timing Error", "Technique Error",
                 "Temperature Error", "Missing Step", "Other")
            )
        },
    )  # fmt: skip
    for _activity, (name, recipe_steps, edges) in RECIPES.items():
        _dump(
            base / "task_graphs" / f"{name.lower().replace(' ', '')}.json",
            {"steps": {str(k): v for k, v in recipe_steps.items()}, "edges": [list(e) for e in edges]},
        )
    _dump(base / TRUTH_FILE, truth)
    return SampleSources(
        root=base,
        recordings=len(RECORDINGS),
        steps=sum(len(actions) for _, actions in RECORDINGS.values()),
        frames=frames,
    )
