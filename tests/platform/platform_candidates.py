"""A small candidate directory in the release layout with every sidecar the platform reads.

Real files: coded synthetic videos (PyAV/libx264), JSONL written like `expvid build` writes them.
Two experiments: E1 (Biology) with Level-1, Level-2 (two segments over a six-step procedure) and
Level-3 items plus its paper; E2 (Chemistry) with one Level-1 item, for discipline routing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from expvid.media.synth import scene_frame, write_video

FULL_STEPS = [
    "Coat coverslips with vitronectin solution",
    "Seed cells onto the coated coverslips",
    "Aspirate the medium from the well",
    "Rinse the well twice with PBS",
    "Add 300 microliters of imaging medium",
    "Place the chamber on the heated stage",
]
SEG1 = [(3, 1.0, 2.0), (4, 2.0, 3.0), (5, 3.0, 4.0)]  # (number, start, end) in E1's source video
SEG2 = [(5, 3.0, 4.0), (6, 4.0, 5.5)]

PAPER = """# Introduction
Vitronectin is a defined substrate for long-term live imaging of stem cell colonies.

# Results
Colonies stayed pluripotent for 12 h under the heated stage.

# Discussion
The approach could be extended to drug screening.
"""


def _numbered(texts: list[str]) -> str:
    return "\n".join(f"{i}. {t}" for i, t in enumerate(texts, start=1))


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def make_videos(root: Path) -> dict[str, str]:
    """One 6 s source video and one 2 s clip, copied to every path the records name."""
    source = root / "sources" / "E1" / "video.mp4"
    write_video(source, (scene_frame(i, 96, 64) for i in range(60)), fps=10, gop=10, preset="ultrafast")
    clip = root / "videos" / "level_1" / "E1" / "clip_m.mp4"
    write_video(clip, (scene_frame(20 + i, 96, 64) for i in range(20)), fps=10, gop=10, preset="ultrafast")
    paths = {
        "l1_materials": "videos/level_1/E1/clip_m.mp4",
        "l1_tools": "videos/level_1/E1/clip_t.mp4",
        "l1_chem": "videos/level_1/E2/clip_c.mp4",
        "seg1": "videos/level_2/video_segments/E1/clip_1.mp4",
        "seg2": "videos/level_2/video_segments/E1/clip_2.mp4",
        "verif": "videos/level_2/video_verification/E1/clip_1_removed_step_2.mp4",
        "pred": "videos/level_2/step_prediction/E1/clip_1_prediction.mp4",
        "full": "videos/level_3/E1_.mp4",
    }
    for relative in paths.values():
        target = root / relative
        if target != clip:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source if relative == paths["full"] else clip, target)
    return paths


def make_candidates(root: Path, *, videos: dict[str, str] | None = None) -> Path:
    """Write the candidate directory into `root` (created) and return it."""
    root.mkdir(parents=True, exist_ok=True)
    paths = videos or make_videos(root)
    bio = {"video_id": "E1", "category": "Biology"}
    seg1_texts = [FULL_STEPS[n - 1] for n, _, _ in SEG1]
    annotations = {
        "level1/materials": [
            {
                "id": 0,
                "video_path": paths["l1_materials"],
                "question": "What material is added to the well in this step?",
                "options": {"A": "Vitronectin solution", "B": "Trypsin", "C": "Ethanol", "D": "Agarose gel"},
                "answer": "A",
                "asr_caption": "Add vitronectin solution into each well containing a coverslip.",
                **bio,
            }
        ],
        "level1/tools": [
            {
                "id": 0,
                "video_path": paths["l1_tools"],
                "question": "What laboratory tool is being used in this research step?",
                "options": {"A": "Centrifuge", "B": "Erlenmeyer flask", "C": "Petri dish", "D": "Test tube"},
                "answer": "C",
                "asr_caption": "Transfer the coverslip to a dish.",
                **bio,
            },
            {
                "id": 1,
                "video_path": paths["l1_materials"],
                "question": "Which instrument holds the coverslip?",
                "options": {"A": "Tweezers", "B": "Spatula", "C": "Pipette", "D": "Scalpel"},
                "answer": "A",
                "asr_caption": "",
                **bio,
            },
            {
                "id": 2,
                "video_path": paths["l1_chem"],
                "question": "Which glassware is heated?",
                "options": {"A": "Beaker", "B": "Burette", "C": "Flask", "D": "Vial"},
                "answer": "C",
                "asr_caption": "Heat the flask gently.",
                "video_id": "E2",
                "category": "Chemistry",
            },
        ],
        "level2/sequence_ordering": [
            {
                "id": 0,
                "video_path": paths["seg1"],
                "question": "What is the correct sequence of steps shown in the video?",
                "options": {
                    "A": _numbered([seg1_texts[1], seg1_texts[0], seg1_texts[2]]),
                    "B": _numbered(seg1_texts),
                    "C": _numbered([seg1_texts[0], seg1_texts[2], seg1_texts[1]]),
                    "D": _numbered([seg1_texts[2], seg1_texts[1], seg1_texts[0]]),
                },
                "answer": "B",
                "asr_caption": "Aspirate, rinse twice, then add the imaging medium.",
                **bio,
            }
        ],
        "level2/sequence_generation": [
            {
                "id": 0,
                "video_path": paths["seg1"],
                "question": "Based on the full step list, determine the step numbers shown in the video.\n"
                f"Full Step List:\n{_numbered(FULL_STEPS)}",
                "answer": ["3", "4", "5"],
                "asr_caption": "Aspirate, rinse twice, then add the imaging medium.",
                **bio,
            },
            {
                "id": 1,
                "video_path": paths["seg2"],
                "question": "Based on the full step list, determine the step numbers shown in the video.\n"
                f"Full Step List:\n{_numbered(FULL_STEPS)}",
                "answer": ["5", "6"],
                "asr_caption": "Add medium and place the chamber.",
                **bio,
            },
        ],
        "level2/video_verification": [
            {
                "id": 0,
                "video_path": paths["verif"],
                "question": "Given the complete step list, which step was *not* performed in the video?\n"
                f"Step List:\n{_numbered(seg1_texts)}",
                "options": {"A": "1", "B": "2", "C": "3"},
                "answer": "B",
                "asr_caption": "Aspirate, then add the imaging medium.",
                **bio,
            }
        ],
        "level2/step_prediction": [
            {
                "id": 0,
                "video_path": paths["pred"],
                "question": "Given all steps of the experiment, please predict the next operation that will "
                f"take place after this video segment.\nFull Step List:\n{_numbered(FULL_STEPS).removeprefix('1. ')}",
                "answer": 5,
                "asr_caption": "Aspirate and rinse.",
                **bio,
            }
        ],
        "level3/experimental_conclusion": [
            {
                "id": 0,
                "video_path": paths["full"],
                "question": "Colonies on the ____ coating remained pluripotent for ____ hours.",
                "answer": ["vitronectin", "12"],
                "asr_caption": "",
                **bio,
            }
        ],
        "level3/scientific_discovery": [
            {
                "id": 0,
                "video_path": paths["full"],
                "question": "The approach could be extended to ______ screening.",
                "answer": ["drug"],
                "asr_caption": "",
                **bio,
            }
        ],
    }
    for name, records in annotations.items():
        _write(root / "annotations" / f"{name}.jsonl", records)
    _write(
        root / "provenance.jsonl",
        [
            {
                "item": "materials/0",
                "task": "materials",
                "video_id": "E1",
                "source": {"video": "sources/E1/video.mp4", "start": 2.0, "end": 4.0},
                "drafts": [
                    {
                        "stage": "level1",
                        "model": "deepseek-r1",
                        "prompt_id": "l1_material",
                        "raw_response": "{}",
                    }
                ],
                "flags": [
                    {"kind": "blind_answerable", "detail": "3 of 3 text-only models answered", "score": 0.83}
                ],
            },
            {
                "item": "tools/0",
                "task": "tools",
                "video_id": "E1",
                "drafts": [{"stage": "level1", "model": "deepseek-r1"}],
                "flags": [
                    {"kind": "asr_leakage", "detail": "answer 'dish' appears in the narration", "score": 1.0}
                ],
            },
            *(
                {"item": key, "task": key.split("/")[0], "video_id": "E1", "segment_id": seg}
                for key, seg in (
                    ("sequence_ordering/0", "E1/seg_1"),
                    ("sequence_generation/0", "E1/seg_1"),
                    ("video_verification/0", "E1/seg_1"),
                    ("step_prediction/0", "E1/seg_1"),
                    ("sequence_generation/1", "E1/seg_2"),
                )
            ),
        ],
    )
    _write(
        root / "segments.jsonl",
        [
            {
                "segment_id": "E1/seg_1",
                "video_id": "E1",
                "clip": paths["seg1"],
                "start": 1.0,
                "end": 4.0,
                "steps": [{"number": n, "text": FULL_STEPS[n - 1], "start": s, "end": e} for n, s, e in SEG1],
                "full_step_list": FULL_STEPS,
                "items": [
                    "sequence_ordering/0",
                    "sequence_generation/0",
                    "video_verification/0",
                    "step_prediction/0",
                ],
            },
            {
                "segment_id": "E1/seg_2",
                "video_id": "E1",
                "clip": paths["seg2"],
                "start": 3.0,
                "end": 5.5,
                "steps": [{"number": n, "text": FULL_STEPS[n - 1], "start": s, "end": e} for n, s, e in SEG2],
                "full_step_list": FULL_STEPS,
                "items": ["sequence_generation/1"],
            },
        ],
    )
    _write(
        root / "experiments.jsonl",
        [
            {"video_id": "E1", "title": "Live imaging on vitronectin", "discipline": "Biology", "duration": 6.0,
             "full_video": paths["full"]},
            {"video_id": "E2", "title": "Heating a flask", "discipline": "Chemistry", "duration": 2.0},
        ],
    )  # fmt: skip
    (root / "papers").mkdir(exist_ok=True)
    (root / "papers" / "E1.md").write_text(PAPER, encoding="utf-8")
    return root
