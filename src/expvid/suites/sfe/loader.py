"""Loading SFE: the English and Chinese sets (separate datasets) with their images.

Records (formats.md): `id` (the SFE task id is the prefix before "/", e.g. `C004/...`), `field`,
`question_type` (mcq | exact_match | open_ended), `question`, `options` (a list whose entries
already carry their letters), `answer` (boxes as `[x1,y1,x2,y2;x1,y1,x2,y2]`, coordinates in
0..1, for E011/E012), `images` (a list of paths). A language's records are the JSON / JSONL /
parquet files in a folder named `en` / `zh` or ending in `-en` / `-zh` (`20250611-en/`, as the
Hugging Face release has them), or a file `en.jsonl` / `sfe_en.jsonl` / `sfe_en.parquet`. An image
path is looked up as written under the dataset root, then as `images/<file name>` (what the
official task does), then next to the records file. Parquet image columns may instead embed the
image bytes (`{bytes, path}` structs, the Hugging Face image feature): those are written once into
the cache (`parquet.ImageStore`) and sent as released.

Ids repeat across languages, so an item's id is `"{language}/{id}"`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from expvid.media.cache import default_cache_dir
from expvid.schema import (
    AnswerType,
    Box,
    DataError,
    ImagesRef,
    Item,
    RecordProblem,
    describe_validation_error,
)
from expvid.schema.dataset import Dataset, FileProblem
from expvid.suites.records import RecordError, RecordReader, check_fields, read_json_release, text_field
from expvid.suites.release_io import release_root, wanted_tasks
from expvid.suites.sfe.official_boxes import parse_official_boxes
from expvid.suites.sfe.parquet import IMAGE_CACHE, PARQUET_SUFFIX, ImageStore, file_sha256, parquet_records
from expvid.suites.sfe.spec import (
    GROUNDING_TASK_IDS,
    LANGUAGES,
    QUESTION_TYPES,
    SUITE,
    TASK_LEVELS,
    TASKS,
    discipline_of,
)

_REQUIRED = ("id", "field", "question_type", "question", "answer", "images")
_LEVEL = re.compile(r"^\s*[Ll]?([123])\s*$")
RECORD_SUFFIXES = (".jsonl", ".json", PARQUET_SUFFIX)


def language_files(root: Path, language: str) -> list[Path]:
    """The records files of one language, in a stable order."""
    found: list[Path] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        name = folder.name.lower()
        if name == language or name.endswith((f"-{language}", f"_{language}")):
            found += sorted(p for p in folder.iterdir() if p.suffix in RECORD_SUFFIXES and p.is_file())
    for suffix in RECORD_SUFFIXES:
        for pattern in (f"{language}{suffix}", f"*_{language}{suffix}", f"*-{language}{suffix}"):
            found += sorted(root.glob(pattern))
    return list(dict.fromkeys(found))


def read_level_map(path: Path) -> dict[str, int]:
    """A JSON object {task_id: level} (level 1-3 or "L1"-"L3")."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise DataError(f"{path}: cannot read the cognitive-level map ({error})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected an object mapping SFE task ids to levels 1-3")
    levels: dict[str, int] = {}
    for task_id, value in data.items():
        level = _level(value)
        if level is None:
            raise DataError(f"{path}: level {value!r} of task {task_id!r} is not 1, 2 or 3 (or L1-L3)")
        levels[str(task_id).upper()] = level
    return levels


def _level(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value in (1, 2, 3) else None
    match = _LEVEL.match(value) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def load_sfe(
    root: Path | str,
    *,
    languages: Sequence[str] = ("en",),
    tasks: Iterable[str] | None = None,
    strict: bool = False,
    check_media: bool = True,
    levels: dict[str, int] | None = None,
    image_cache: Path | None = None,
) -> Dataset:
    """Load the SFE sets of `languages` from `root`; `tasks` selects question types (+ grounding).

    `image_cache`: where images embedded in parquet files are written once (default: the frame
    cache, `$EXPVID_CACHE_DIR/sfe-images`).
    """
    del check_media  # a missing image is scored as a media failure; see `Dataset.missing_media()`
    root_path = release_root(root, "SFE")
    bad = [language for language in languages if language not in LANGUAGES]
    if bad or not languages:
        raise DataError(f"SFE languages are {', '.join(LANGUAGES)}; got {list(languages)}")
    wanted = wanted_tasks(tasks, (spec.name for spec in TASKS), suite_label="SFE", noun="task")
    level_map = {**TASK_LEVELS, **(levels or {})}
    dataset = Dataset(suite=SUITE, root=root_path, tasks=tuple(spec for spec in TASKS if spec.name in wanted))
    store = ImageStore(image_cache if image_cache is not None else default_cache_dir() / IMAGE_CACHE)
    for language in languages:
        files = language_files(root_path, language)
        if not files:
            raise DataError(
                f"{root_path}: no {language} records (JSONL, JSON or parquet files in a folder "
                f"'{language}' or '*-{language}', or a file '{language}.jsonl')"
            )
        for path in files:
            _load_file(path, root_path, language, level_map, wanted, dataset, store)
    if strict and dataset.problems:
        raise DataError(dataset.problems)
    return dataset


def _load_file(
    path: Path,
    root: Path,
    language: str,
    level_map: dict[str, int],
    wanted: set[str],
    dataset: Dataset,
    store: ImageStore,
) -> None:
    records: Iterable[tuple[int, dict[str, Any] | RecordProblem]]
    if path.suffix == PARQUET_SUFFIX:
        try:
            dataset.file_hashes[str(path.relative_to(root))] = file_sha256(path)
        except OSError as error:
            dataset.add_invalid(
                FileProblem(path, 0, f"cannot read the file ({error.strerror or error})"), None
            )
            return
        records = parquet_records(path)
    else:
        records = read_json_release(dataset, path)
    reader = RecordReader(
        task_of=task_of_record,
        to_item=lambda record: record_to_item(record, root, path.parent, language, level_map, store),
        source_id=lambda record: record.get("id") if isinstance(record.get("id"), str) else None,
    )
    reader.read(dataset, path, records, wanted)


def _image_entries(value: Any) -> list[str | dict[str, Any]]:
    """The record's images as a list of paths or `{bytes, path}` structs (a lone one is a list of one)."""
    entries = value if isinstance(value, list) else [value] if isinstance(value, str | dict) else None
    if not entries or not all(_usable_entry(entry) for entry in entries):
        shown = _shown_images(value)
        raise RecordError(f"images must be a non-empty list of paths or embedded images, got {shown!r}")
    return entries


def _usable_entry(entry: Any) -> bool:
    if isinstance(entry, str):
        return bool(entry.strip())
    if isinstance(entry, dict):
        return bool(entry.get("bytes")) or (
            isinstance(entry.get("path"), str) and bool(entry["path"].strip())
        )
    return False


def _shown_images(value: Any) -> Any:
    """`value` with embedded bytes replaced by their size (for messages and `meta`)."""
    if isinstance(value, list):
        return [_shown_images(entry) for entry in value]
    if isinstance(value, dict):
        data = value.get("bytes")
        return {**value, "bytes": f"<{len(data)} bytes>"} if isinstance(data, bytes | bytearray) else value
    return value


def task_of_record(record: dict[str, Any]) -> str | None:
    """The task a record belongs to, as far as it can be read (grounding by its id's prefix)."""
    raw_id = record.get("id")
    if isinstance(raw_id, str) and raw_id.split("/")[0].strip().upper() in GROUNDING_TASK_IDS:
        return "grounding"
    kind = record.get("question_type")
    kind = kind.strip().lower() if isinstance(kind, str) else None
    return kind if kind in QUESTION_TYPES else None


def _images(value: Any, root: Path, folder: Path, store: ImageStore) -> tuple[str, ...]:
    resolved = []
    for entry in _image_entries(value):
        if isinstance(entry, dict) and entry.get("bytes"):
            try:
                resolved.append(str(store.put(bytes(entry["bytes"]))))
            except (ValueError, OSError) as error:
                raise RecordError(f"embedded image {entry.get('path') or ''}: {error}") from None
            continue
        raw = entry if isinstance(entry, str) else str(entry["path"])
        candidates = [root / raw, root / "images" / Path(raw).name, folder / raw]
        # A missing image does not make the record invalid: the runner scores it as a media failure.
        path = next((c for c in candidates if c.is_file()), candidates[0])
        resolved.append(str(path.resolve()))
    return tuple(resolved)


def _gold_boxes(answer: str) -> list[Box]:
    parsed = parse_official_boxes(answer)
    if parsed is None:
        raise RecordError(f"grounding answer {answer!r} is not a box list [x1,y1,x2,y2;...]")
    boxes = []
    for values in parsed:
        if not all(0.0 <= v <= 1.0 for v in values):
            raise RecordError(f"grounding answer box {values} is not normalised to 0..1")
        try:
            boxes.append(Box(x1=values[0], y1=values[1], x2=values[2], y2=values[3]))
        except ValidationError:
            raise RecordError(f"grounding answer box {values} has its corners out of order") from None
    return boxes


def record_to_item(
    record: dict[str, Any],
    root: Path,
    folder: Path,
    language: str,
    level_map: dict[str, int],
    store: ImageStore | None = None,
) -> Item:
    check_fields(record, _REQUIRED)
    raw_id = text_field(record, "id")
    task_id = raw_id.split("/")[0].strip().upper()
    question_type = str(record["question_type"]).strip().lower()
    if question_type not in QUESTION_TYPES:
        raise RecordError(
            f"question_type {record['question_type']!r} is not one of {', '.join(QUESTION_TYPES)}"
        )
    field = record["field"]
    question = record["question"]
    if not isinstance(field, str) or not field.strip():
        raise RecordError("field must be a non-empty string")
    if not isinstance(question, str) or not question.strip():
        raise RecordError("question must be a non-empty string")
    options = record.get("options") or []
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise RecordError(f"options must be a list of texts, got {options!r}")
    if question_type == "mcq" and len(options) < 2:
        raise RecordError("a multiple-choice question needs at least two options")
    answer = record["answer"]
    if isinstance(answer, bool) or not isinstance(answer, str | int | float) or str(answer).strip() == "":
        raise RecordError(f"answer must be a non-empty text, got {answer!r}")
    answer = str(answer)
    images = _images(record["images"], root, folder, store or ImageStore(default_cache_dir() / IMAGE_CACHE))
    grounding = task_id in GROUNDING_TASK_IDS
    explicit = record.get("cognitive_level", record.get("level"))
    level = _level(explicit) if explicit is not None else level_map.get(task_id)
    if explicit is not None and level is None:
        raise RecordError(f"cognitive level {explicit!r} is not 1, 2 or 3 (or L1-L3)")
    discipline = discipline_of(task_id) or field.strip()
    try:
        return Item(
            id=f"{language}/{raw_id}",
            source_id=raw_id,
            suite=SUITE,
            task="grounding" if grounding else question_type,
            level=level,
            discipline=discipline,
            media=ImagesRef(paths=images),
            question=question,
            answer=_gold_boxes(answer) if grounding else [answer],
            answer_type=AnswerType.BOXES if grounding else AnswerType.FREE_TEXT,
            meta={
                "language": language,
                "task_id": task_id,
                "field": field,
                "question_type": question_type,
                "options": options,
                "answer_raw": answer,
                "images_raw": _shown_images(record["images"]),
            },
        )
    except ValidationError as error:
        raise RecordError(describe_validation_error(error)) from None
