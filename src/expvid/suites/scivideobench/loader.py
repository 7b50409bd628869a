"""Loading the SciVideoBench release: one JSONL (or JSON) file of questions and `jove_*.mp4` videos.

Records (formats.md): `video_id`, `question_id`, `question` (with mm:ss times), `options` (an
object "A".."J" -> text, or a list lettered in order), `answer` (one letter), `question_type`,
`video_duration` (seconds), `discipline`, `subject`, `category` (optional). `(video_id,
question_id)` is not unique in the release (324 of 1000 rows collide, always across question
types), so an item is keyed by all three: id `"{video_id}/{question_id}/{task}"`.

Texts are kept verbatim; the frame rewrite happens when the prompt is built, so `--keep-times`
and the official prompt read the same item. Bad records become `RecordProblem`s (file:line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from expvid.schema import (
    OPTION_LETTERS,
    AnswerType,
    Item,
    VideoRef,
    describe_validation_error,
)
from expvid.suites.records import RecordError, check_fields
from expvid.suites.scivideobench.spec import (
    DISCIPLINE_GROUPS,
    QUESTION_TYPES,
    SUITE,
    VIDEO_DIRS,
    VIDEO_SUFFIXES,
)

_REQUIRED = ("video_id", "question_id", "question", "options", "answer", "question_type", "video_duration")
_KNOWN = (*_REQUIRED, "discipline", "subject", "category")


def find_video(root: Path, video_id: str) -> Path | None:
    """`jove_{id}.mp4`, then `.MP4`, then `.mkv` (the official order), in videos/, video_with_text_pil/, root."""
    for folder in VIDEO_DIRS:
        for suffix in VIDEO_SUFFIXES:
            path = root / folder / f"jove_{video_id}{suffix}"
            if path.is_file():
                return path
    return None


def _task_of(record: dict[str, Any]) -> str | None:
    raw_type = record.get("question_type")
    return QUESTION_TYPES.get(raw_type) if isinstance(raw_type, str) else None


def _identifier(record: dict[str, Any], name: str) -> str:
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, int | str) or str(value).strip() == "":
        raise RecordError(f"{name} must be a non-empty string or an integer, got {value!r}")
    return str(value).strip()


def _options(raw: Any) -> dict[str, str]:
    if isinstance(raw, list):
        if not 2 <= len(raw) <= len(OPTION_LETTERS):
            raise RecordError(f"options must list 2 to {len(OPTION_LETTERS)} texts, got {len(raw)}")
        raw = dict(zip(OPTION_LETTERS, raw, strict=False))
    if not isinstance(raw, dict) or len(raw) < 2:
        raise RecordError(f"options must be an object of letters A-J (or a list), got {raw!r}")
    bad = [key for key in raw if key not in OPTION_LETTERS]
    if bad:
        raise RecordError(f"option keys must be letters A-J, got {bad}")
    options = {}
    for letter, text in raw.items():
        if isinstance(text, bool) or not isinstance(text, str | int | float):
            raise RecordError(f"option {letter} must be text, got {text!r}")
        options[letter] = str(text)
    return options


def _duration(raw: Any) -> float:
    if isinstance(raw, bool):
        raise RecordError(f"video_duration must be a number of seconds, got {raw!r}")
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise RecordError(f"video_duration must be a number of seconds, got {raw!r}") from None
    if not value >= 1:
        raise RecordError(
            f"video_duration {raw!r} is under one second (the official frame rewrite divides by it)"
        )
    return value


def record_to_item(record: dict[str, Any], root: Path) -> Item:
    check_fields(record, _REQUIRED)
    video_id = _identifier(record, "video_id")
    question_id = _identifier(record, "question_id")
    question = record["question"]
    if not isinstance(question, str) or not question.strip():
        raise RecordError("question must be a non-empty string")
    raw_type = record["question_type"]
    if raw_type not in QUESTION_TYPES:
        raise RecordError(f"question_type {raw_type!r} is not one of {', '.join(QUESTION_TYPES)}")
    task = QUESTION_TYPES[raw_type]
    options = _options(record["options"])
    answer = record["answer"]
    if not isinstance(answer, str) or answer.strip() not in options:
        raise RecordError(f"answer {answer!r} is not one of the options {list(options)}")
    duration = _duration(record["video_duration"])
    raw_discipline = record.get("discipline")
    if raw_discipline is not None and not isinstance(raw_discipline, str):
        raise RecordError(f"discipline must be a string, got {raw_discipline!r}")
    discipline = DISCIPLINE_GROUPS.get(raw_discipline, raw_discipline) if raw_discipline else None

    # A missing video does not make the record invalid: the runner scores it as a media failure.
    video = find_video(root, video_id) or root / VIDEO_DIRS[0] / f"jove_{video_id}.mp4"
    extras = {key: value for key, value in record.items() if key not in _KNOWN}
    try:
        return Item(
            id=f"{video_id}/{question_id}/{task}",
            source_id=question_id,
            suite=SUITE,
            task=task,
            discipline=discipline,
            media=VideoRef(path=str(video), source_path=str(video.relative_to(root))),
            question=question,
            options=options,
            answer=answer.strip(),
            answer_type=AnswerType.CHOICE,
            meta={
                "video_id": video_id,
                "question_id": question_id,
                "question_type": raw_type,
                "video_duration": duration,
                "discipline_raw": raw_discipline,
                "subject": record.get("subject"),
                "category": record.get("category"),
                **({"extra": extras} if extras else {}),
            },
        )
    except ValidationError as error:
        raise RecordError(describe_validation_error(error)) from None
