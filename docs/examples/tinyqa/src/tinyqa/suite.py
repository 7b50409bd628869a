"""TinyQA as an expvid suite: a loader, a prompt, a judge, a setting and a sample generator.

Everything comes from `expvid.suites.api`. The release is one JSON Lines file, `questions.jsonl`:
{"id", "video", "question", "options" (multiple choice only), "answer"}; videos under `videos/`.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from expvid.suites.api import (
    AnswerType,
    GenerationDefaults,
    Item,
    JudgeReplyError,
    LevelRule,
    LevelSpec,
    RecordError,
    SampleReport,
    SuiteSettings,
    TaskSpec,
    VideoQASuite,
    VideoRef,
    claim_sample_dir,
    scene_frame,
    setting,
    write_video,
)


def prompt(name: str) -> str:
    return resources.files("tinyqa").joinpath("prompts", name).read_text(encoding="utf-8")


class TinyQASettings(SuiteSettings):
    hint: bool = setting(False, help="Tell the model the video is a lab demonstration.", paper="TinyQA §2")


class TinyQASuite(VideoQASuite):
    """Two tasks: multiple choice (read strictly) and open answers (judged)."""

    name = "tinyqa"
    title = "TinyQA: a tiny video QA example suite"
    tasks = (
        TaskSpec("choice", None, AnswerType.CHOICE, "Multiple choice", "MC", "questions.jsonl", "accuracy"),
        TaskSpec("open", None, AnswerType.FREE_TEXT, "Open answer", "Open", "questions.jsonl", "accuracy"),
    )
    levels = (LevelSpec("Overall", ("choice", "open"), LevelRule.ITEM_WEIGHTED),)
    generation = GenerationDefaults(temperature=0.0, max_tokens=64, source="TinyQA §3")
    release_files = ("questions.jsonl",)
    default_frames: ClassVar[dict[str, int]] = {"all": 4}
    Settings = TinyQASettings

    def task_of(self, record: dict[str, Any]) -> str | None:
        return "choice" if record.get("options") else "open"

    def record_to_item(self, record: dict[str, Any], root: Path) -> Item:
        if not {"id", "video", "question", "answer"} <= set(record):
            raise RecordError("needs id, video, question and answer")
        options = record.get("options")
        if options and record["answer"] not in options:
            raise RecordError(f"answer {record['answer']!r} is not an option")
        return Item(
            id=str(record["id"]),
            suite=self.name,
            task=self.task_of(record) or "open",
            media=VideoRef(path=str(root / record["video"]), source_path=record["video"]),
            question=record["question"],
            options=options,
            answer=record["answer"] if options else [record["answer"]],
            answer_type=AnswerType.CHOICE if options else AnswerType.FREE_TEXT,
            meta={"video_id": record["video"]},
        )

    def prompt_text(self, item: Item) -> str:
        options = "".join(f"{key}. {text}\n" for key, text in (item.options or {}).items())
        text = prompt("answer.txt").format(question=item.question, options=options)
        return ("This is a lab demonstration.\n" if self.settings.hint else "") + text

    def judge_prompts(self) -> dict[str, tuple[str, str]]:
        return {"open": (prompt("judge.system.txt"), prompt("judge.user.txt"))}

    def parse_judge_reply(self, reply: str | None) -> float:
        word = (reply or "").strip().lower().rstrip(".")
        if word not in ("correct", "wrong"):
            raise JudgeReplyError(f"expected correct or wrong, got {reply!r}")
        return 1.0 if word == "correct" else 0.0

    def make_sample(self, directory: Path, seed: int, *, force: bool) -> SampleReport:
        root = Path(directory)
        claim_sample_dir(root, self.name, seed, force=force, owned=("questions.jsonl", "videos"))
        records = [
            {"id": "q1", "video": "videos/v1.mp4", "question": "What is poured?", "options": {"A": "Water", "B": "Oil"}, "answer": "A"},
            {"id": "q2", "video": "videos/v1.mp4", "question": "Which tool stirs?", "answer": "a glass rod"},
        ]  # fmt: skip
        (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        write_video(root / "videos" / "v1.mp4", (scene_frame(i, 64, 48, seed=seed) for i in range(8)), fps=4)
        return SampleReport(root=root, seconds=0.0, counts={"choice": 1, "open": 1}, what="2 questions")
