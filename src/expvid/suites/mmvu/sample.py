"""A small MMVU set in the published shapes: `validation.json` and `videos/<Subject>/<n>.mp4`.

Eight questions, four per question type and two per discipline, on five synthetic videos (one
video shared by two questions, as 3,000 questions share 1,529 videos): records as the release
writes them (Hub URLs for the videos, empty choices for open questions, the metadata block), so
the loader, the Hub layout and lmms-eval interop are tested on the real shapes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from expvid.suites.api import SampleReport, claim_sample_dir, scene_frame, write_video

WIDTH, HEIGHT, FPS = 128, 72, 4
OWNED = ("validation.json", "videos")
HUB = "https://huggingface.co/datasets/yale-nlp/MMVU/resolve/main/videos"
#: (subject folder, number, seconds)
VIDEOS = [
    ("Chemistry", 0, 6),
    ("Computer_Science", 3, 5),
    ("Basic_Medicine", 1, 4),
    ("Art", 0, 7),
    ("Law", 2, 3),
]
_CHOICES = {
    "Chemistry/0": {"A": "10.0", "B": "5.0", "C": "12.0", "D": "15.0", "E": "20.0"},
    "Basic_Medicine/1": {"A": "Norovirus", "B": "Measles virus", "C": "Hemorrhagic fever virus",
                         "D": "Human papillomavirus", "E": "Arboviral encephalitis virus"},
    "Law/2": {"A": "Offer", "B": "Acceptance", "C": "Consideration", "D": "Capacity", "E": "Legality"},
    "Computer_Science/3": {"A": "Bubble Sort", "B": "Merge Sort", "C": "Insertion Sort", "D": "Selection Sort",
                           "E": "Heap Sort"},
}  # fmt: skip
#: (video, subject, question, answer; a letter for multiple choice)
QUESTIONS = [
    ("Chemistry/0", "Chemistry", "Assume that 2.24 liters of gas fully participates in the reaction shown in the video under the standard temperature and pressure condition, how many grams of precipitate are produced approximately?", "A"),
    ("Chemistry/0", "Chemistry", "Which gas is bubbled through the clear solution in the video?", "Carbon dioxide"),
    ("Computer_Science/3", "Computer Science", "The algorithm demonstrated in the video is which common algorithm?", "C"),
    ("Computer_Science/3", "Computer Science", "Assume that the algorithm is correctly implemented to fully sort the list. What is the total number of comparisons performed in the algorithm?", "14"),
    ("Basic_Medicine/1", "Basic Medicine", "Which virus does the video depict?", "D"),
    ("Art/0", "Art", "Which cinematic shooting technique is shown in the video?", "Dolly Zoom"),
    ("Law/2", "Law", "Which element of a contract is missing in the negotiation shown in the video?", "C"),
    ("Law/2", "Law", "What legal doctrine lets the buyer in the video avoid the contract?", "Misrepresentation"),
]  # fmt: skip


def make_mmvu_sample(directory: Path | str, seed: int = 0, *, force: bool = False) -> SampleReport:
    """Write the sample into `directory` (empty, or a previous MMVU sample with `force`)."""
    started = time.perf_counter()
    root = Path(directory).expanduser()
    claim_sample_dir(root, "mmvu", seed, force=force, owned=OWNED)
    records = []
    for number, (video, subject, question, answer) in enumerate(QUESTIONS):
        choices = _CHOICES.get(video) if len(answer) == 1 else None
        records.append({
            "id": f"validation_{number}",
            "video": f"{HUB}/{video}.mp4",
            "youtube_url": f"https://www.youtube.com/watch?v=sample{number:04d}",
            "question_type": "multiple-choice" if choices else "open-ended",
            "metadata": {
                "subject": subject,
                "textbook": "A textbook of the subject (sample)",
                "knowledge": [f"https://en.wikipedia.org/wiki/{subject.replace(' ', '_')}"],
                "rationale": "The video shows the process step by step (sample rationale).",
            },
            "question": question,
            "choices": choices or dict.fromkeys("ABCDE", ""),
            "answer": answer,
        })  # fmt: skip
    (root / "validation.json").write_text(
        json.dumps(records, indent=4, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    for index, (folder, number, seconds) in enumerate(VIDEOS):
        frames = (scene_frame(i, WIDTH, HEIGHT, seed=seed + index, fps=FPS) for i in range(seconds * FPS))
        write_video(
            root / "videos" / folder / f"{number}.mp4", frames, fps=FPS, preset="ultrafast", threads=1
        )
    counts = {"multiple_choice": sum(len(a) == 1 for *_, a in QUESTIONS)}
    counts["open_ended"] = len(QUESTIONS) - counts["multiple_choice"]
    return SampleReport(
        root=root,
        seconds=time.perf_counter() - started,
        counts=counts,
        what=f"{len(QUESTIONS)} questions on {len(VIDEOS)} videos",
    )
