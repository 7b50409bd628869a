"""A small ProMQA set in the published shapes: examples.json, graphs.json and recordings.

Two recipes (one with repeated step texts, which merge into one DOT node as in the release's
"Dressed Up Meatballs"), two synthetic recordings with frame codes (4 frames per second, so the
frame shown at second t carries code 4t), and ten examples covering the eight question types,
clean and noisy examples, and machine / human / both answer sources. Records carry the same keys
as the release, annotation trail included.

`sources/` holds inputs for the construction recipe (`expvid build --recipe promqa`): recordings
with burned-in frame numbers, CaptainCook4D-format step and error annotations, and recipe graphs
(`sample_sources.py`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from expvid.media.synth import scene_frame, write_video
from expvid.suites.promqa.sample_sources import write_sample_sources
from expvid.suites.release_io import claim_sample_dir
from expvid.suites.sample_report import SampleReport

SUITE = "promqa"
WIDTH, HEIGHT, FPS = 160, 96, 4
OWNED = ("examples.json", "graphs.json", "videos", "sources")

GRAPHS: dict[str, dict[str, Any]] = {
    "1": {
        "name": "Spiced Cocoa",
        "steps": {
            "0": "START",
            "1": "Fill-Fill a microwave-safe mug with milk",
            "2": "Microwave-Microwave the mug for 30 seconds",
            "3": "Stir-Stir the contents with a spoon",
            "4": "Add-Add 1 teaspoon of cocoa powder to the mug",
            "5": "Microwave-Microwave the mug for 30 seconds",
            "6": "Stir-Stir the contents with a spoon",
            "7": "Add-Add a pinch of cinnamon",
            "8": "END",
        },
        "edges": [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 8], [3, 7], [7, 5]],
    },
    "2": {
        "name": "Cucumber Bowl",
        "steps": {
            "0": "START",
            "1": "Rinse-Rinse 1 cucumber",
            "2": "Slice-Slice the cucumber into thin rounds",
            "3": "Whisk-Whisk 1 cup of yogurt in a bowl",
            "4": "Add-Add the cucumber to the yogurt",
            "5": "Season-Season with 1/4 teaspoon of salt",
            "6": "END",
        },
        "edges": [[0, 1], [1, 2], [0, 3], [2, 4], [3, 4], [4, 5], [5, 6]],
    },
}

#: recording id -> (activity id, seconds)
RECORDINGS: dict[str, tuple[str, int]] = {"1_10": ("1", 40), "2_20": ("2", 30)}


def _step(step_id: int, description: str, *errors: tuple[str, str]) -> dict[str, Any]:
    step: dict[str, Any] = {"step_id": step_id, "description": description}
    if errors:
        step["errors"] = [{"tag": tag, "description": text} for tag, text in errors]
    return step


FILL = _step(1, "Fill-Fill a microwave-safe mug with milk")
FILL_SPILL = _step(
    1, "Fill-Fill a microwave-safe mug with milk", ("Technique Error", "Spilled milk while filling")
)
MICRO = _step(2, "Microwave-Microwave the mug for 30 seconds")
MICRO_LONG = _step(
    2, "Microwave-Microwave the mug for 90 seconds", ("Timing Error", "Microwaved for 90 s instead of 30 s")
)
STIR = _step(3, "Stir-Stir the contents with a spoon")
COCOA_TBSP = _step(
    4,
    "Add-Add 1 tablespoon of cocoa powder to the mug",
    ("Measurement Error", "Added a tablespoon instead of a teaspoon"),
)
RINSE = _step(1, "Rinse-Rinse 1 cucumber")
SLICE_CUBES = _step(
    2, "Slice-Cut the cucumber into cubes", ("Technique Error", "Cubed instead of thin rounds")
)
WHISK = _step(3, "Whisk-Whisk 1 cup of yogurt in a bowl")
ADD = _step(4, "Add-Add the cucumber to the yogurt")
ADD_EARLY = _step(
    4, "Add-Add the cucumber to the yogurt", ("Order Error", "Added before the yogurt was whisked")
)
SALT_PEPPER = _step(
    5, "Season-Season with 1/4 teaspoon of pepper", ("Preparation Error", "Used pepper instead of salt")
)
MICRO_HIGH = _step(
    5,
    "Microwave-Microwave the mug on low for 30 seconds",
    ("Temperature Error", "Set to low instead of high"),
)

#: (recording, suffix, end_time, type, previous, current, target field, target, question, answers, tags, noisy)
EXAMPLES: list[tuple[Any, ...]] = [
    (
        "1_10",
        1,
        "00:00:07",
        "next",
        [],
        FILL,
        "next_steps",
        [MICRO],
        "What should I do next?",
        ["Microwave the mug of milk for 30 seconds."],
        ["machine"],
        False,
    ),
    (
        "1_10",
        2,
        "00:00:15",
        "missing",
        [FILL],
        MICRO,
        "missing_steps",
        [],
        "Did I skip any step so far?",
        ["No, you have not missed any step.", "Nothing is missing yet."],
        ["machine", "annotator"],
        False,
    ),
    (
        "1_10",
        3,
        "00:00:25",
        "measurement",
        [FILL_SPILL, MICRO, STIR],
        COCOA_TBSP,
        "error_description",
        "Added a tablespoon instead of a teaspoon",
        "Did I add the right amount of cocoa?",
        ["No, the recipe asks for 1 teaspoon of cocoa, not a tablespoon."],
        ["annotator"],
        True,
    ),
    (
        "1_10",
        4,
        "00:00:31",
        "timing",
        [FILL],
        MICRO_LONG,
        "error_description",
        "Microwaved for 90 s instead of 30 s",
        "Did I microwave the milk for the right time?",
        ["No, it should be microwaved for 30 seconds."],
        ["machine"],
        False,
    ),
    (
        "1_10",
        5,
        "00:00:38",
        "temperature",
        [FILL_SPILL, MICRO, STIR, COCOA_TBSP],
        MICRO_HIGH,
        "error_description",
        "Set to low instead of high",
        "Was the microwave power right?",
        ["No, it should be on high.", "You used low power; the recipe needs high power."],
        ["machine", "adjudicator"],
        True,
    ),
    (
        "2_20",
        1,
        "00:00:06",
        "next",
        [],
        RINSE,
        "next_steps",
        [_step(2, "Slice-Slice the cucumber into thin rounds")],
        "What is the next step now?",
        ["Slice the cucumber into thin rounds.", "Whisk the yogurt in a bowl."],
        ["machine", "machine"],
        False,
    ),
    (
        "2_20",
        2,
        "00:00:12",
        "technique",
        [RINSE],
        SLICE_CUBES,
        "error_description",
        "Cubed instead of thin rounds",
        "Did I cut the cucumber correctly?",
        ["No, the cucumber should be sliced into thin rounds."],
        ["annotator"],
        False,
    ),
    (
        "2_20",
        3,
        "00:00:19",
        "order",
        [RINSE, SLICE_CUBES],
        ADD_EARLY,
        "error_description",
        "Added before the yogurt was whisked",
        "Should I have done anything in a different order?",
        ["Yes, you should have whisked the yogurt before adding the cucumber."],
        ["machine"],
        True,
    ),
    (
        "2_20",
        4,
        "00:00:24",
        "missing",
        [RINSE, SLICE_CUBES, ADD_EARLY],
        WHISK,
        "missing_steps",
        [],
        "Did I miss any step?",
        ["No, all steps so far are done."],
        ["annotator"],
        True,
    ),
    (
        "2_20",
        5,
        "00:00:29",
        "preparation",
        [RINSE, WHISK, ADD],
        SALT_PEPPER,
        "error_description",
        "Used pepper instead of salt",
        "Did I use the right seasoning?",
        ["No, the recipe calls for salt, not pepper.", "You should season it with salt instead of pepper."],
        ["machine", "annotator"],
        False,
    ),
]


def _record(entry: tuple[Any, ...]) -> dict[str, Any]:
    recording, suffix, end_time, kind, previous, current, field, target, question, answers, tags, noisy = (
        entry
    )
    activity = GRAPHS[RECORDINGS[recording][0]]["name"]
    example_id = f"{recording}_{suffix}"
    return {
        "recording_id": recording,
        "example_id": example_id,
        "end_time": end_time,
        "activity_name": activity,
        "previous_steps": previous,
        "current_step": current,
        "type": kind,
        field: target,
        "question_id": f"{example_id}_{kind}",
        "is_noisy": noisy,
        "generation": {
            "prompt": f"# Instruction\nA person is cooking {activity} with their friend, who is a skilled cook.",
            "response": f"* {question}\n    * {answers[0]}",
            "model_id": "gpt-4o-2024-08-06",
            "template_type": "excerpt-step",
            "qas": [{"question": question, "answers": [answers[0]]}],
        },
        "adjudication": {
            "question": question,
            "answers": answers,
            "answer_tags": tags,
            "init": {"question": True, "answers": [True] * len(answers)},
        },
        "verification": {
            "question": question,
            "answers": answers[:1],
            "judges": [{"question": True, "answers": [True], "comment": []} for _ in range(2)],
        },
        "question": question,
        "question_approved_by": "annotator",
        "answers": answers,
        "answer_tags": tags,
        "answer_approved_by": ["annotator"] * len(answers),
    }


def make_promqa_sample(
    directory: Path | str, seed: int = 0, *, force: bool = False, with_sources: bool = True
) -> SampleReport:
    """Write the sample into `directory` (empty, or a previous sample with `force`); `with_sources`
    adds the inputs of `expvid build --recipe promqa` (CaptainCook4D layout) under `sources/`."""
    started = time.perf_counter()
    root = Path(directory).expanduser()
    claim_sample_dir(root, SUITE, seed, force=force, owned=OWNED)
    records = [_record(entry) for entry in EXAMPLES]
    (root / "examples.json").write_text(
        json.dumps(records, indent=4, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (root / "graphs.json").write_text(
        json.dumps(GRAPHS, indent=4, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for number, (recording, (_activity, seconds)) in enumerate(RECORDINGS.items()):
        frames = (scene_frame(i, WIDTH, HEIGHT, seed=seed + number, fps=FPS) for i in range(seconds * FPS))
        write_video(root / "videos" / f"{recording}.mp4", frames, fps=FPS, preset="ultrafast", threads=1)
    what = f"{len(records)} examples on {len(RECORDINGS)} recordings"
    if with_sources:
        sources = write_sample_sources(root / "sources", seed)
        what += f"; inputs for expvid build --recipe promqa in {sources.root}"
    return SampleReport(root=root, seconds=time.perf_counter() - started, what=what)
