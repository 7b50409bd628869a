"""A small SciVideoBench set in the published shapes: `scivideobench_1k.jsonl` and `jove_*.mp4|MP4|mkv`.

Twelve questions on three short synthetic videos (frame codes in the top band, so tests can read
which frames a model received). The records exercise what the real release does: options as an
object and as a list, `(video_id, question_id)` pairs repeated across question types, raw
disciplines outside the paper's four (Biochemistry, Engineering), mm:ss times, a range, a ratio
("1:50") and a time followed by a dash, `video_duration` with a fraction of a second, and the
official video-name fallbacks (.MP4, .mkv).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from expvid.media.synth import scene_frame, write_video
from expvid.suites.release_io import claim_sample_dir
from expvid.suites.sample_report import SampleReport

SUITE = "scivideobench"
WIDTH, HEIGHT, FPS = 160, 96, 4
OWNED = ("scivideobench_1k.jsonl", "videos")

#: video id -> (file suffix, seconds of video, video_duration as the release writes it)
VIDEOS: dict[str, tuple[str, int, float]] = {
    "10001": (".mp4", 25, 24.6),
    "10002": (".MP4", 20, 20.0),
    "10003": (".mkv", 16, 16.4),
}

_OPTIONS_A = {
    "A": "To keep the enzyme inactive until the substrate is added",
    "B": "To speed up the reaction",
    "C": "To prevent evaporation of the buffer",
    "D": "To lower the pH",
    "E": "To denature the protein",
    "F": "To sterilise the tube",
    "G": "To dissolve the pellet",
    "H": "To calibrate the thermometer",
    "I": "To mix the phases",
    "J": "To remove air bubbles",
}
_OPTIONS_NUMERIC = [
    "0.2 mM",
    "0.4 mM",
    "1.0 mM",
    "2.0 mM",
    "4.0 mM",
    "5.0 mM",
    "8.0 mM",
    "10 mM",
    "20 mM",
    "50 mM",
]


def _options(prefix: str) -> dict[str, str]:
    return {letter: f"{text} ({prefix})" for letter, text in _OPTIONS_A.items()}


RECORDS: list[dict[str, Any]] = [
    {
        "video_id": "10001",
        "question_id": 1,
        "question": "Between 0:04-0:09 the researcher adds the buffer. Why is the tube kept on ice at 00:12?",
        "options": _options("ice"),
        "answer": "A",
        "question_type": "Conceptual Reasoning",
        "discipline": "Biology",
        "subject": "Cell Biology",
    },
    {
        "video_id": "10001",
        "question_id": 1,
        "question": "The stock is diluted 1:50 at 0:15 from a 50 mM solution. What is the final concentration?",
        "options": _OPTIONS_NUMERIC,
        "answer": "E",
        "question_type": "Quantitative Reasoning",
        "discipline": "Biology",
        "subject": "Cell Biology",
    },
    {
        "video_id": "10001",
        "question_id": 2,
        "question": "If the incubation shown at 0:18 – 0:22 were skipped, what would happen to the signal?",
        "options": _options("incubation"),
        "answer": "C",
        "question_type": "Hypothetical Reasoning",
        "discipline": "Biology",
        "subject": "Cell Biology",
    },
    {
        "video_id": "10001",
        "question_id": 3,
        "question": "At 0:20 - just before the end - which reagent is pipetted into the well?",
        "options": _options("reagent"),
        "answer": "J",
        "question_type": "Conceptual Reasoning",
        "discipline": "Biology",
        "subject": "Cell Biology",
    },
    {
        "video_id": "10002",
        "question_id": 1,
        "question": "Why is the column equilibrated at 00:03 before the lysate is loaded at 00:10?",
        "options": _options("column"),
        "answer": "B",
        "question_type": "Conceptual Reasoning",
        "discipline": "Biochemistry",
        "subject": "Proteomics",
    },
    {
        "video_id": "10002",
        "question_id": 1,
        "question": "Suppose the elution at 0:12-0:16 used water instead of imidazole. What would the gel show?",
        "options": _options("elution"),
        "answer": "G",
        "question_type": "Hypothetical Reasoning",
        "discipline": "Biochemistry",
        "subject": "Proteomics",
    },
    {
        "video_id": "10002",
        "question_id": 2,
        "question": "The balance at 0:06 reads the mass of the resin. How many millimoles are loaded?",
        "options": _OPTIONS_NUMERIC,
        "answer": "C",
        "question_type": "Quantitative Reasoning",
        "discipline": "Medicine",
        "subject": "Drug Delivery",
    },
    {
        "video_id": "10002",
        "question_id": 3,
        "question": "What is the purpose of the wash step shown at 00:08?",
        "options": _options("wash"),
        "answer": "D",
        "question_type": "Conceptual Reasoning",
        "discipline": "Medicine",
        "subject": "Drug Delivery",
    },
    {
        "video_id": "10003",
        "question_id": 1,
        "question": "Why does the beam deflect when the voltage is raised at 0:05?",
        "options": _options("beam"),
        "answer": "H",
        "question_type": "Conceptual Reasoning",
        "discipline": "Engineering",
        "subject": "Mechanical Engineering",
    },
    {
        "video_id": "10003",
        "question_id": 2,
        "question": "Using the readings at 0:02 and 0:11, what is the strain rate of the sample?",
        "options": _OPTIONS_NUMERIC,
        "answer": "B",
        "question_type": "Quantitative Reasoning",
        "discipline": "Physics",
        "subject": "Fluid Dynamics",
    },
    {
        "video_id": "10003",
        "question_id": 2,
        "question": "If the chamber shown at 00:07-00:09 were not evacuated, how would the plasma change?",
        "options": _options("plasma"),
        "answer": "I",
        "question_type": "Hypothetical Reasoning",
        "discipline": "Physics",
        "subject": "Plasma Physics",
    },
    {
        "video_id": "10003",
        "question_id": 3,
        "question": "Why is the solvent degassed at 0:13 before the measurement?",
        "options": _options("solvent"),
        "answer": "F",
        "question_type": "Hypothetical Reasoning",
        "discipline": "Chemistry",
        "subject": "Analytical Chemistry",
    },
]


def make_scivideobench_sample(directory: Path | str, seed: int = 0, *, force: bool = False) -> SampleReport:
    """Write the sample release into `directory` (empty, or a previous sample with `force`)."""
    started = time.perf_counter()
    root = Path(directory).expanduser()
    claim_sample_dir(root, SUITE, seed, force=force, owned=OWNED)
    lines = []
    for record in RECORDS:
        suffix, _seconds, duration = VIDEOS[record["video_id"]]
        lines.append(json.dumps({**record, "video_duration": duration}, ensure_ascii=False))
    (root / "scivideobench_1k.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for number, (video_id, (suffix, seconds, _duration)) in enumerate(VIDEOS.items()):
        frames = (
            scene_frame(index, WIDTH, HEIGHT, seed=seed + number, fps=FPS) for index in range(seconds * FPS)
        )
        write_video(
            root / "videos" / f"jove_{video_id}{suffix}", frames, fps=FPS, preset="ultrafast", threads=1
        )
    what = f"{len(RECORDS)} questions on {len(VIDEOS)} videos"
    return SampleReport(root=root, seconds=time.perf_counter() - started, what=what)
