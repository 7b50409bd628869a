"""TinyMC as an expvid suite: Video-MME's release shape, multiple choice only (so no judge).

The release is one parquet file, `videomme/test-00000-of-00001.parquet`, one row per question:
{"question_id", "videoID", "domain", "task_type", "question", "options" (a list of "A. text"),
"answer" (a letter)}; videos are `videos/<videoID>.mp4`.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from expvid.suites.api import (
    AnswerType,
    GenerationDefaults,
    Item,
    LevelRule,
    LevelSpec,
    RecordError,
    SampleReport,
    TaskSpec,
    VideoQASuite,
    VideoRef,
    claim_sample_dir,
    scene_frame,
    write_video,
)

RELEASE = "videomme/test-00000-of-00001.parquet"
TASKS = ("perception", "reasoning")
OPTION = re.compile(r"([A-J])\.\s*(.+)", re.DOTALL)


class TinyMCSuite(VideoQASuite):
    """Four-option questions in two tasks; every answer read by strict letter extraction."""

    name = "tinymc"
    title = "TinyMC: multiple choice from a parquet release, no judge"
    tasks = tuple(
        TaskSpec(t, None, AnswerType.CHOICE, t.title(), t[:4].title() + ".", RELEASE, "accuracy")
        for t in TASKS
    )
    levels = (LevelSpec("Overall", TASKS, LevelRule.ITEM_WEIGHTED),)
    generation = GenerationDefaults(temperature=0.0, max_tokens=16, source="TinyMC §4")
    release_files = (RELEASE,)  # parquet: read row by row, by its suffix
    id_field = "question_id"  # the record's id field: named in invalid-record and duplicate messages
    default_frames: ClassVar[dict[str, int]] = {"all": 4}
    # No default_resolution: frames at the source size. (448, None) would squash to 448x448,
    # (None, 768) cap the longest side at 768 px.

    def task_of(self, record: dict[str, Any]) -> str | None:
        return record.get("task_type") if record.get("task_type") in TASKS else None

    def record_to_item(self, record: dict[str, Any], root: Path) -> Item:
        task = self.task_of(record)
        if task is None:
            raise RecordError(f"task_type {record.get('task_type')!r} is not one of {', '.join(TASKS)}")
        options = {}
        for text in record.get("options") or []:
            match = OPTION.fullmatch(str(text))
            if match is None:
                raise RecordError(f"option {text!r} is not written 'A. text'")
            options[match.group(1)] = match.group(2)
        if record.get("answer") not in options:
            raise RecordError(f"answer {record.get('answer')!r} is not one of the options {list(options)}")
        video = f"videos/{record['videoID']}.mp4"
        return Item(
            id=str(record["question_id"]),
            suite=self.name,
            task=task,
            discipline=record.get("domain"),  # scores per discipline in scores.json
            media=VideoRef(path=str(root / video), source_path=video),
            question=record["question"],
            options=options,
            answer=record["answer"],
            answer_type=AnswerType.CHOICE,
            meta={"video_id": record["videoID"]},  # CIs resample whole videos
        )

    def prompt_text(self, item: Item) -> str:
        template = resources.files("tinymc").joinpath("prompts", "answer.txt").read_text(encoding="utf-8")
        options = "".join(f"{key}. {text}\n" for key, text in (item.options or {}).items())
        return template.format(question=item.question, options=options)

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        root = Path(directory)
        claim_sample_dir(root, self.name, seed, force=force, owned=("videomme", "videos"))
        four = ["A. A beaker", "B. A flask", "C. A pipette", "D. A burette"]
        rows = [
            {"question_id": "001-1", "videoID": "v001", "domain": "Chemistry", "task_type": "perception", "question": "What is filled first?", "options": four, "answer": "B"},
            {"question_id": "001-2", "videoID": "v001", "domain": "Chemistry", "task_type": "reasoning", "question": "Why is it swirled?", "options": ["A. To mix", "B. To cool", "C. To heat", "D. To weigh"], "answer": "A"},
            {"question_id": "002-1", "videoID": "v002", "domain": "Biology", "task_type": "perception", "question": "What is held?", "options": four, "answer": "C"},
        ]  # fmt: skip
        (root / "videomme").mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), root / RELEASE)
        for index, video in enumerate(("v001", "v002")):  # 96x54: a 16:9 source, sent as it is
            frames = (scene_frame(i, 96, 54, seed=seed + index) for i in range(8))
            write_video(root / "videos" / f"{video}.mp4", frames, fps=4)
        return SampleReport(
            root=root, seconds=0.0, counts={"perception": 2, "reasoning": 1}, what="3 questions"
        )
