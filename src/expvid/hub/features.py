"""The column types of each task file of a Hub export, declared in the dataset card for `datasets`.

Left to infer them, `datasets` types each column from the file it reads, and one column defeats
it: completeness verification maps 3 to 10 letters to step numbers in `options`, so its rows hold
structs with different fields and `datasets` falls back to an untyped JSON column (`Json`). With
the features declared in the card's `dataset_info`, every column is typed: `options` is a struct of
the letters the task's items use, each a string (a letter an item lacks is null), `answer` a string,
an integer or a list of strings as the task's answer type says. The files themselves keep the
release format (`options` an object per item), which is what `expvid eval --data` reads.

The YAML is written in the form every `datasets` version reads (`sequence:` for lists, which
datasets 4+ reads as a `List`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from expvid.schema import AnswerType

#: `datasets` dtype of the answer column per answer type (after `dataset_repo` made it uniform).
_ANSWER: dict[AnswerType, dict[str, Any]] = {
    AnswerType.CHOICE: {"dtype": "string"},
    AnswerType.STEP_NUMBER: {"dtype": "int64"},
    AnswerType.STEP_SEQUENCE: {"sequence": "string"},  # step lists are written as strings
    AnswerType.BLANKS: {"sequence": "string"},
}


def task_features(records: Iterable[dict[str, Any]], answer_type: AnswerType) -> list[dict[str, Any]]:
    """The `features` list of one config's `dataset_info`, for records as `dataset_repo` writes them."""
    rows = list(records)
    ids_are_ints = bool(rows) and all(
        isinstance(r["id"], int) and not isinstance(r["id"], bool) for r in rows
    )
    features: list[dict[str, Any]] = [
        {"name": "id", "dtype": "int64" if ids_are_ints else "string"},
        {"name": "video_path", "dtype": "string"},
        {"name": "question", "dtype": "string"},
    ]
    if answer_type is AnswerType.CHOICE:
        letters = sorted({letter for r in rows for letter in r["options"]})
        features.append({"name": "options", "struct": [{"name": x, "dtype": "string"} for x in letters]})
    if answer_type not in _ANSWER:
        raise ValueError(f"no Hub column type for answer type {answer_type.value}")
    features.append({"name": "answer", **_ANSWER[answer_type]})
    features += [
        {"name": "asr_caption", "dtype": "string"},
        {"name": "video_id", "dtype": "string"},
        {"name": "category", "dtype": "string"},
    ]
    return features
