"""ExpVid: the ten tasks as data, and the loader for the published release layout.

The release (formats.md, "ExpVid") is one JSONL file per task under `annotations/level{1,2,3}/`,
records with the fields `id, video_path, question, options, answer, asr_caption, video_id,
category`, and pre-cut clips under `videos/`. Ids are only unique within a file, so an item's id
is `"{task}/{record id}"`. Answers come in several shapes (letters, an int or a numeric string,
lists of numeric strings, lists of blank fillers); the loader normalises each to the task's
`AnswerType` once, here, so no scorer ever has to guess. Question texts are kept byte for byte
(full-width commas, the step-prediction list without "1." before its first step): they are data.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from expvid.schema import (
    OPTION_LETTERS,
    AnswerType,
    AnswerValue,
    DataError,
    Item,
    VideoRef,
    count_blanks,
    describe_validation_error,
)
from expvid.schema.dataset import Dataset, FileProblem, TaskSpec
from expvid.suites.records import RecordError, RecordReader, check_fields, text_id
from expvid.suites.release_io import jsonl_records, read_release_bytes

SUITE = "expvid"

_C, _N, _S, _B = AnswerType.CHOICE, AnswerType.STEP_NUMBER, AnswerType.STEP_SEQUENCE, AnswerType.BLANKS

#: The ten tasks in the column order of the paper's Table 2 (Level-1 | Level-2 | Level-3).
#: Metrics from section 4 / appendix E.1: top-1 accuracy for MCQs and step prediction, Jaccard for
#: sequence generation, per-blank accuracy (LLM-judged) for the fill-in-the-blank Level-3 tasks.
EXPVID_TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("tools", 1, _C, "Tool Recognition", "Tool", "annotations/level1/tools.jsonl", "accuracy"),
    TaskSpec(
        "materials", 1, _C, "Material Recognition", "Mat.", "annotations/level1/materials.jsonl", "accuracy"
    ),
    TaskSpec(
        "quantity", 1, _C, "Quantity Recognition", "Quan.", "annotations/level1/quantity.jsonl", "accuracy"
    ),
    TaskSpec(
        "operation", 1, _C, "Operation Recognition", "Oper.", "annotations/level1/operation.jsonl", "accuracy"
    ),
    TaskSpec(
        "sequence_ordering",
        2,
        _C,
        "Step Ordering",
        "Ord.",
        "annotations/level2/sequence_ordering.jsonl",
        "accuracy",
    ),
    TaskSpec(
        "sequence_generation",
        2,
        _S,
        "Sequence Generation",
        "Gen.",
        "annotations/level2/sequence_generation.jsonl",
        "jaccard",
    ),
    TaskSpec(
        "video_verification",
        2,
        _C,
        "Completeness Verification",
        "Veri.",
        "annotations/level2/video_verification.jsonl",
        "accuracy",
    ),
    TaskSpec(
        "step_prediction",
        2,
        _N,
        "Step Prediction",
        "Pred.",
        "annotations/level2/step_prediction.jsonl",
        "accuracy",
    ),
    TaskSpec(
        "experimental_conclusion",
        3,
        _B,
        "Experimental Analysis",
        "Anal.",
        "annotations/level3/experimental_conclusion.jsonl",
        "blank_accuracy",
    ),
    TaskSpec(
        "scientific_discovery",
        3,
        _B,
        "Scientific Discovery",
        "Disc.",
        "annotations/level3/scientific_discovery.jsonl",
        "blank_accuracy",
    ),
)

TASKS: dict[str, TaskSpec] = {spec.name: spec for spec in EXPVID_TASKS}

#: Fields every release record carries; `options` is required for the choice tasks only.
RECORD_FIELDS: tuple[str, ...] = (
    "id",
    "video_path",
    "question",
    "options",
    "answer",
    "asr_caption",
    "video_id",
    "category",
)
_REQUIRED = ("id", "video_path", "question", "answer", "asr_caption", "video_id", "category")
_NUMERIC = re.compile(r"\s*\d+\s*")


def task_spec(name: str) -> TaskSpec:
    """The spec of one ExpVid task; `DataError` naming the valid tasks for an unknown name."""
    try:
        return TASKS[name]
    except KeyError:
        raise DataError(f"unknown ExpVid task {name!r}; tasks are: {', '.join(TASKS)}") from None


def load_expvid(
    root: Path | str,
    *,
    tasks: Iterable[str] | None = None,
    strict: bool = False,
    check_media: bool = True,
    fingerprint_all_files: bool = False,
) -> Dataset:
    """Load an ExpVid release (or a candidate/verified export in the same layout) from `root`.

    Every unusable line becomes an invalid record (`RecordProblem(file, line, message)`, counted in
    its task) and the rest still loads; with `strict=True` a `DataError` listing all problems is
    raised instead. A task file that is absent is skipped, unless that task was requested
    explicitly in `tasks`. A record whose video file is missing still loads: the runner scores it
    as a media failure, and `Dataset.missing_media()` lists such files. `check_media` is accepted
    for the suite protocol; media are never decoded here.

    `fingerprint_all_files`: with `tasks`, only the chosen tasks' records become items (parsing and
    validating all ten files costs a second on the full release), but the fingerprint still covers
    every task file in the root and the media their records name, read without building items: the
    same fingerprint as loading everything, so run directories and comparisons stay compatible.
    """
    del check_media  # media are checked by `Dataset.media_files()` and when frames are sampled
    root_path = Path(root).expanduser()
    if not root_path.is_dir():
        raise DataError(f"{root_path}: not a directory (expected an ExpVid release root)")
    root_path = root_path.resolve()
    if isinstance(tasks, str):  # a single name, not an iterable of one-letter "tasks"
        tasks = [tasks]
    requested = None if tasks is None else list(dict.fromkeys(tasks))
    specs = EXPVID_TASKS if requested is None else tuple(task_spec(name) for name in requested)
    if requested is not None:  # keep the canonical order whatever order they were asked in
        specs = tuple(spec for spec in EXPVID_TASKS if spec in specs)

    dataset = Dataset(suite=SUITE, root=root_path)
    loaded: list[TaskSpec] = []
    for spec in specs:
        path = root_path / spec.path
        if not path.is_file():
            if requested is not None:
                message = f"annotation file for task {spec.name!r} not found"
                dataset.add_invalid(FileProblem(path, 0, message), spec.name)
            continue
        loaded.append(spec)
        data = read_release_bytes(path)
        if isinstance(data, FileProblem):
            dataset.add_invalid(data, spec.name)
            continue
        dataset.file_hashes[spec.path] = hashlib.sha256(data).hexdigest()
        _reader(spec, root_path).read(dataset, path, jsonl_records(path, data), default_task=spec.name)
    if requested is None and not loaded:
        expected = ", ".join(spec.path for spec in EXPVID_TASKS[:2])
        raise DataError(f"{root_path}: no ExpVid annotation files found (expected e.g. {expected}, ...)")
    dataset.tasks = tuple(loaded)
    if fingerprint_all_files and requested is not None:
        _fingerprint_other_files(root_path, [spec for spec in EXPVID_TASKS if spec not in specs], dataset)
    if strict and dataset.problems:
        raise DataError(dataset.problems)
    return dataset


def item_from_record(task: str, record: dict[str, Any], root: Path | str) -> Item:
    """One release record of `task` as an `Item`, with the loader's checks (`DataError` naming the problem).

    For code that gets records one at a time rather than as files (an lmms-eval task's `doc`). A
    missing video does not make a record invalid (the runner scores it as a media failure).
    """
    try:
        return record_to_item(task_spec(task), record, Path(root).resolve())
    except RecordError as exc:
        raise DataError(f"{task} record {record.get('id')!r}: {exc}") from None


class _VideoResolver:
    """`(root / video_path).resolve()` with each directory resolved once: the release names thousands
    of clips in a few folders, and resolving every path walks every component (a `lstat` each)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folders: dict[str, str] = {}
        self._paths: dict[str, str] = {}  # records of one clip name it again and again

    def __call__(self, video_path: str) -> Path:
        return Path(self.text(video_path))

    def text(self, video_path: str) -> str:
        known = self._paths.get(video_path)
        if known is None:
            known = self._paths[video_path] = self._resolve(video_path)
        return known

    def _resolve(self, video_path: str) -> str:
        joined = os.path.join(self.root, video_path)
        folder, name = os.path.split(joined)
        resolved = self._folders.get(folder)
        if resolved is None:
            resolved = self._folders[folder] = os.path.realpath(folder)
        candidate = os.path.join(resolved, name)
        # A file that is itself a link (or a name such as ".."), resolved the long way.
        if name in ("", ".", "..") or os.path.islink(candidate):
            return str(Path(joined).resolve())
        return candidate


def _fingerprint_other_files(root: Path, specs: list[TaskSpec], dataset: Dataset) -> None:
    """Hash the other task files and note the videos their records name, without making items."""
    resolver = _VideoResolver(root)
    for spec in specs:
        path = root / spec.path
        if not path.is_file():
            continue
        data = read_release_bytes(path)
        if isinstance(data, FileProblem):
            continue  # not chosen: its problems are its own task's, reported when it is
        dataset.file_hashes[spec.path] = hashlib.sha256(data).hexdigest()
        for _, record in jsonl_records(path, data):
            video = record.get("video_path") if isinstance(record, dict) else None
            if isinstance(video, str) and video.strip():
                dataset.add_fingerprint_media(resolver.text(video))


def _reader(spec: TaskSpec, root: Path) -> RecordReader:
    """The records of one task's file: every record is of that task."""
    resolver = _VideoResolver(root)
    return RecordReader(
        task_of=lambda record: spec.name,
        to_item=lambda record: record_to_item(spec, record, root, resolver),
        source_id=lambda record: text_id(record.get("id")),
    )


def record_to_item(
    spec: TaskSpec, record: dict[str, Any], root: Path, resolver: _VideoResolver | None = None
) -> Item:
    check_fields(record, (*_REQUIRED, "options") if spec.answer_type is AnswerType.CHOICE else _REQUIRED)

    record_id = record["id"]
    if isinstance(record_id, bool) or not isinstance(record_id, int | str) or str(record_id) == "":
        raise RecordError(f"id must be a non-empty string or an integer, got {record_id!r}")
    question = _text(record, "question", allow_empty=False)
    video_path = _text(record, "video_path", allow_empty=False)
    category = _text(record, "category", allow_empty=False)
    video_id = record["video_id"]
    if isinstance(video_id, bool) or not isinstance(video_id, int | str) or str(video_id) == "":
        raise RecordError(f"video_id must be a non-empty string or an integer, got {video_id!r}")
    caption = record["asr_caption"]
    if caption is not None and not isinstance(caption, str):
        raise RecordError(f"asr_caption must be a string, got {type(caption).__name__}")

    extras = {key: value for key, value in record.items() if key not in RECORD_FIELDS}
    options: dict[str, str] | None = None
    if spec.answer_type is AnswerType.CHOICE:
        options = _options(record["options"])
    elif "options" in record:  # not part of this task's shape: keep it, but out of the way
        extras["options"] = record["options"]
    answer = _answer(spec, record["answer"], options, question)

    resolved = (resolver or _VideoResolver(root))(video_path)
    try:
        return Item(
            id=f"{spec.name}/{record_id}",
            source_id=str(record_id),
            suite=SUITE,
            task=spec.name,
            level=spec.level,
            discipline=category,
            media=VideoRef(path=str(resolved), source_path=video_path),
            question=question,
            options=options,
            answer=answer,
            answer_type=spec.answer_type,
            context=caption,
            meta={"video_id": str(video_id), **extras},
        )
    except ValidationError as exc:
        raise RecordError(describe_validation_error(exc)) from None


def _text(record: dict[str, Any], name: str, *, allow_empty: bool) -> str:
    value = record[name]
    if not isinstance(value, str):
        raise RecordError(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise RecordError(f"{name} is empty")
    return value


def _options(raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict) or len(raw) < 2:
        raise RecordError(f"options must be an object mapping 2 to 10 letters to texts, got {raw!r}")
    bad = [key for key in raw if key not in OPTION_LETTERS]
    if bad:
        raise RecordError(f"option keys must be letters A-J, got {bad}")
    options: dict[str, str] = {}
    for letter, text in raw.items():
        if isinstance(text, bool) or not isinstance(text, str | int):
            raise RecordError(f"option {letter} must be text, got {text!r}")
        options[letter] = str(text)  # completeness verification maps letters to step numbers
    return options


def _answer(spec: TaskSpec, raw: Any, options: dict[str, str] | None, question: str) -> AnswerValue:
    kind = spec.answer_type
    if kind is AnswerType.CHOICE:
        if not isinstance(raw, str) or options is None or raw not in options:
            raise RecordError(f"answer {raw!r} is not one of the options {list(options or {})}")
        return raw
    if kind is AnswerType.STEP_NUMBER:
        return _step_number(raw, what="answer")
    if kind is AnswerType.STEP_SEQUENCE:
        if not isinstance(raw, list) or not raw:
            raise RecordError(f"answer must be a non-empty list of step numbers, got {raw!r}")
        return [_step_number(value, what="answer entry") for value in raw]
    if kind is AnswerType.BLANKS:
        if not isinstance(raw, list) or not raw or not all(isinstance(value, str) for value in raw):
            raise RecordError(f"answer must be a non-empty list of strings (one per blank), got {raw!r}")
        blanks = count_blanks(question)
        if blanks != len(raw):
            raise RecordError(
                f"question has {blanks} blank(s) (runs of 2+ underscores) but the answer has {len(raw)} "
                f"entr{'y' if len(raw) == 1 else 'ies'}"
            )
        return list(raw)
    raise RecordError(f"task {spec.name} has unsupported answer type {kind.value}")  # pragma: no cover


def _step_number(value: Any, *, what: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _NUMERIC.fullmatch(value):
        return int(value)
    raise RecordError(f"{what} must be a step number (an integer or a numeric string), got {value!r}")
