"""Loading the ProMQA release: `examples.json` (QA pairs) and `graphs.json` (recipe graphs).

`examples.json` is a JSON list of records with `recording_id`, `example_id` (not unique),
`question_id` (unique: the item id), `end_time` ("HH:MM:SS"; the model sees the recording from 0 to
there), `activity_name`, `type`, `previous_steps` / `current_step` (`{step_id, description,
errors?: [{tag, description}]}`), `is_noisy`, `question`, `answers`, `answer_tags`, plus the type's
target steps and the annotation trail (kept in `meta`). `graphs.json` maps activity ids to
`{name, steps, edges}`; each example's recipe is the graph whose name is its `activity_name`,
rendered once here as the official DOT text (`recipe_dot`).

Recordings are not part of the release (they are CaptainCook4D's): `videos/{recording_id}.mp4`
(or `_4K.mp4`, see `spec.VIDEO_CANDIDATES`). The QA loads without them; a missing recording is
scored as a media failure when run.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Unpack

from pydantic import ValidationError

from expvid.schema import AnswerType, DataError, Item, RecordProblem, VideoRef, describe_validation_error
from expvid.schema.dataset import Dataset, FileProblem
from expvid.suites.promqa.recipe_dot import RecipeGraphError, recipe_dot
from expvid.suites.promqa.spec import (
    EXAMPLES_FILE,
    GRAPHS_FILE,
    HUMAN_TAGS,
    MACHINE_TAG,
    QUESTION_TYPES,
    SUITE,
    TASKS,
    VIDEO_CANDIDATES,
)
from expvid.suites.protocol import LoadOptions
from expvid.suites.records import RecordError, RecordReader, check_fields, read_json_release, text_field
from expvid.suites.release_io import read_release_bytes, release_root, wanted_tasks

_REQUIRED = (
    "recording_id",
    "example_id",
    "question_id",
    "end_time",
    "activity_name",
    "type",
    "previous_steps",
    "current_step",
    "is_noisy",
    "question",
    "answers",
    "answer_tags",
)
_CLOCK = re.compile(r"^(\d{1,2}):([0-5]\d):([0-5]\d)$")
_TYPES = {name for name, _ in QUESTION_TYPES}


def end_seconds(text: Any) -> int:
    """ "HH:MM:SS" -> seconds; the official code cuts the recording there."""
    match = _CLOCK.match(text) if isinstance(text, str) else None
    if not match:
        raise RecordError(f"end_time must be HH:MM:SS, got {text!r}")
    hours, minutes, seconds = (int(part) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total < 1:
        raise RecordError(f"end_time {text!r} leaves no recording to show")
    return total


def find_recording(root: Path, recording_id: str) -> Path | None:
    for pattern in VIDEO_CANDIDATES:
        path = root / pattern.format(id=recording_id)
        if path.is_file():
            return path
    return None


def answer_source(tags: list[str]) -> str:
    """Table 16's answer source: "machine", "human" (annotator/adjudicator) or "both"."""
    machine = MACHINE_TAG in tags
    human = any(tag in HUMAN_TAGS for tag in tags)
    return "both" if machine and human else "machine" if machine else "human"


def load_graphs(path: Path, dataset: Dataset) -> dict[str, str]:
    """Activity name -> recipe DOT; problems go to the dataset."""
    data = read_release_bytes(path)
    if isinstance(data, RecordProblem):
        dataset.add_invalid(data, None)
        return {}
    dataset.file_hashes[path.name] = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8-sig")
        graphs = json.loads(text)
    except UnicodeDecodeError as error:
        dataset.add_invalid(
            FileProblem(path, 1, f"not UTF-8 text ({error.reason} at byte {error.start})"), None
        )
        return {}
    except json.JSONDecodeError as error:
        dataset.add_invalid(FileProblem(path, error.lineno, f"invalid JSON ({error.msg})"), None)
        return {}
    if not isinstance(graphs, dict):
        dataset.add_invalid(FileProblem(path, 1, "expected an object mapping activity ids to graphs"), None)
        return {}
    recipes: dict[str, str] = {}
    for activity_id, graph in graphs.items():
        line = _line_of_key(text, activity_id)
        name = graph.get("name") if isinstance(graph, dict) else None
        if not isinstance(name, str) or not name:
            dataset.problems.append(RecordProblem(path, line, f"graph {activity_id!r} has no name"))
            continue
        try:
            recipes[name] = recipe_dot(graph)
        except RecipeGraphError as error:
            dataset.problems.append(RecordProblem(path, line, f"graph {activity_id!r} ({name}): {error}"))
    return recipes


def _line_of_key(text: str, key: str) -> int:
    position = text.find(json.dumps(key) + ":")
    return text.count("\n", 0, position) + 1 if position >= 0 else 1


def load_promqa(root: Path | str, **options: Unpack[LoadOptions]) -> Dataset:
    """Load ProMQA from `root` (examples.json, graphs.json, videos/); `tasks` selects question types.

    Every example becomes an item or an invalid record (counted in its question type when that is
    readable); a missing recording leaves the item in place (scored as a media failure when run;
    `check_media` is not needed: see `Dataset.missing_media()`).
    """
    root_path = release_root(root, "ProMQA")
    wanted = wanted_tasks(options.get("tasks"), _TYPES, suite_label="ProMQA", noun="question type")
    for name in (EXAMPLES_FILE, GRAPHS_FILE):
        if not (root_path / name).is_file():
            raise DataError(
                f"{root_path}: no {name} (a ProMQA release has {EXAMPLES_FILE} and {GRAPHS_FILE})"
            )
    dataset = Dataset(suite=SUITE, root=root_path, tasks=tuple(spec for spec in TASKS if spec.name in wanted))
    recipes = load_graphs(root_path / GRAPHS_FILE, dataset)
    path = root_path / EXAMPLES_FILE
    reader = RecordReader(
        task_of=_task_of,
        to_item=lambda record: record_to_item(record, root_path, recipes),
        source_id=lambda record: (
            record.get("question_id") if isinstance(record.get("question_id"), str) else None
        ),
        key_name="question_id",
    )
    reader.read(dataset, path, read_json_release(dataset, path), wanted)
    if options.get("strict") and dataset.problems:
        raise DataError(dataset.problems)
    return dataset


def _task_of(record: dict[str, Any]) -> str | None:
    kind = record.get("type")
    return kind if isinstance(kind, str) and kind in _TYPES else None


def _steps(value: Any, name: str) -> list[dict[str, Any]]:
    steps = value if isinstance(value, list) else None
    if steps is None:
        raise RecordError(f"{name} must be a list of steps")
    for step in steps:
        _check_step(step, name)
    return steps


def _check_step(step: Any, name: str) -> None:
    if not isinstance(step, dict) or not isinstance(step.get("description"), str):
        raise RecordError(f"{name}: each step needs a text 'description', got {step!r}")
    errors = step.get("errors", [])
    if not isinstance(errors, list) or not all(
        isinstance(e, dict) and isinstance(e.get("tag"), str) and isinstance(e.get("description"), str)
        for e in errors
    ):
        raise RecordError(f"{name}: errors must be a list of {{tag, description}}, got {errors!r}")


def record_to_item(record: dict[str, Any], root: Path, recipes: dict[str, str]) -> Item:
    check_fields(record, _REQUIRED)
    question_id = text_field(record, "question_id")
    kind = record["type"]
    if kind not in _TYPES:
        raise RecordError(f"type {kind!r} is not one of {', '.join(name for name, _ in QUESTION_TYPES)}")
    activity = record["activity_name"]
    if activity not in recipes:
        raise RecordError(f"activity {activity!r} has no recipe graph in {'graphs.json'}")
    seconds = end_seconds(record["end_time"])
    previous = _steps(record["previous_steps"], "previous_steps")
    _check_step(record["current_step"], "current_step")
    answers, tags = record["answers"], record["answer_tags"]
    if (
        not isinstance(answers, list)
        or not answers
        or not all(isinstance(a, str) and a.strip() for a in answers)
    ):
        raise RecordError(f"answers must be a non-empty list of texts, got {answers!r}")
    if not isinstance(tags, list) or len(tags) != len(answers) or not all(isinstance(t, str) for t in tags):
        raise RecordError(f"answer_tags must give one tag per answer ({len(answers)}), got {tags!r}")
    if not isinstance(record["is_noisy"], bool):
        raise RecordError(f"is_noisy must be true or false, got {record['is_noisy']!r}")
    recording_id = str(record["recording_id"])
    # A missing recording does not make the record invalid: the runner scores it as a media failure.
    video = find_recording(root, recording_id) or root / VIDEO_CANDIDATES[0].format(id=recording_id)
    meta = {key: value for key, value in record.items() if key not in ("question", "answers", "question_id")}
    meta.update(
        video_id=recording_id,
        end_seconds=seconds,
        recipe_dot=recipes[activity],
        answer_source=answer_source(tags),
        previous_steps=previous,
    )
    try:
        return Item(
            id=question_id,
            source_id=question_id,
            suite=SUITE,
            task=kind,
            media=VideoRef(
                path=str(video), start=0.0, end=float(seconds), source_path=str(video.relative_to(root))
            ),
            question=_question(record["question"]),
            answer=list(answers),
            answer_type=AnswerType.FREE_TEXT,
            meta=meta,
        )
    except ValidationError as error:
        raise RecordError(describe_validation_error(error)) from None


def _question(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RecordError("question must be a non-empty string")
    return value
