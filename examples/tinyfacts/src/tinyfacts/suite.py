"""The suite that evaluates a TinyFacts release: `facts.jsonl` (one multiple-choice question a line,
the fields expvid's review platform exports) with the videos it names."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from expvid.suites.api import (
    AnswerType,
    GenerationDefaults,
    Item,
    LevelRule,
    LevelSpec,
    RecordError,
    TaskSpec,
    VideoQASuite,
    VideoRef,
)

RELEASE_FILE = "facts.jsonl"


def prompt(name: str) -> str:
    return resources.files("tinyfacts").joinpath("prompts", name).read_text(encoding="utf-8")


class TinyFactsSuite(VideoQASuite):
    """One task: a four-option question per fact, read strictly."""

    name = "tinyfacts"
    title = "TinyFacts: questions on the facts a lab video shows"
    tasks = (TaskSpec("fact", None, AnswerType.CHOICE, "Fact question", "Fact", RELEASE_FILE, "accuracy"),)
    levels = (LevelSpec("Overall", ("fact",), LevelRule.ITEM_WEIGHTED),)
    generation = GenerationDefaults(temperature=0.0, max_tokens=16, source="TinyFacts (expvid's example)")
    release_files = (RELEASE_FILE,)
    default_frames: ClassVar[dict[str, int]] = {"all": 4}

    def task_of(self, record: dict[str, Any]) -> str | None:
        return "fact"

    def record_to_item(self, record: dict[str, Any], root: Path) -> Item:
        if not {"id", "video_path", "question", "options", "answer"} <= set(record):
            raise RecordError("needs id, video_path, question, options and answer")
        if record["answer"] not in record["options"]:
            raise RecordError(f"answer {record['answer']!r} is not an option")
        return Item(
            id=str(record["id"]),
            suite=self.name,
            task="fact",
            discipline=record.get("category"),
            media=VideoRef(path=str(root / record["video_path"]), source_path=record["video_path"]),
            question=record["question"],
            options=record["options"],
            answer=record["answer"],
            answer_type=AnswerType.CHOICE,
            meta={"video_id": record.get("video_id")},
        )

    def prompt_text(self, item: Item) -> str:
        options = "".join(f"{key}. {text}\n" for key, text in (item.options or {}).items())
        return prompt("answer.txt").format(question=item.question, options=options)
