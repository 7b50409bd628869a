"""The loop every loader runs over a release file's records, written once.

Each record of a file becomes an item or an invalid record (`Dataset.add_invalid`) and the rest
still loads: an unreadable line is a problem of unknown task, a record whose task is not selected
is skipped, a record the suite cannot turn into an item (`RecordError`) is invalid in its task, and
a second record with an item id already loaded is a duplicate (invalid, the first one kept). A
loader supplies only what is its own: how to read a record's task, how to make the item, and what
its records call their id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.schema import Item, RecordProblem
from expvid.schema.dataset import Dataset, FileProblem
from expvid.suites.release_io import json_records, read_release_bytes


class RecordError(ValueError):
    """One record cannot become an item; the message becomes a `file:line` problem of its task."""


def text_id(value: Any) -> str | None:
    """A record's id as text, when it is a usable scalar (None for lists, objects, booleans)."""
    return None if value is None or isinstance(value, bool | dict | list) else str(value)


def check_fields(record: dict[str, Any], required: Iterable[str]) -> None:
    """`RecordError` naming every field of `required` the record lacks."""
    missing = [name for name in required if name not in record]
    if missing:
        raise RecordError(f"missing field(s): {', '.join(missing)}")


def text_field(record: dict[str, Any], name: str) -> str:
    """The record's field `name`, which must be a non-empty string (`RecordError` otherwise)."""
    value = record[name]
    if not isinstance(value, str) or not value.strip():
        raise RecordError(f"{name} must be a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True)
class RecordReader:
    """How one suite's records become items (see the module docstring)."""

    #: The task a record belongs to as far as it can be read, None when unreadable.
    task_of: Callable[[dict[str, Any]], str | None]
    #: The item for a record (raises `RecordError`).
    to_item: Callable[[dict[str, Any]], Item]
    #: The record's own id, for invalid records and duplicate messages.
    source_id: Callable[[dict[str, Any]], str | None]
    #: What the duplicate message calls the key ("id", "question_id").
    key_name: str = "id"

    def read(
        self,
        dataset: Dataset,
        path: Path,
        records: Iterable[tuple[int, dict[str, Any] | RecordProblem]],
        wanted: Collection[str] | None = None,
        *,
        default_task: str | None = None,
    ) -> None:
        """Add every record of `path` to `dataset`; `default_task` is the task of a file of one task."""
        first_line: dict[str, int] = {}
        loaded = {item.id for item in dataset.items}
        for line, record in records:
            if isinstance(record, RecordProblem):
                dataset.add_invalid(record, default_task)  # unreadable: its task is unknown
                continue
            task = self.task_of(record) if default_task is None else default_task
            if wanted is not None and task is not None and task not in wanted:
                continue
            try:
                item = self.to_item(record)
            except RecordError as error:
                dataset.add_invalid(RecordProblem(path, line, str(error)), task, self.source_id(record))
                continue
            if item.id in loaded:
                where = f"first on line {first_line[item.id]}" if item.id in first_line else "loaded before"
                message = f"duplicate {self.key_name} {_shown_key(record, self, item)} ({where})"
                dataset.add_invalid(RecordProblem(path, line, message), item.task, item.source_id)
                continue
            first_line[item.id] = line
            loaded.add(item.id)
            dataset.add_item(item)


def _shown_key(record: dict[str, Any], reader: RecordReader, item: Item) -> str:
    raw = record.get(reader.key_name)
    return repr(raw) if raw is not None and not isinstance(raw, dict | list) else repr(item.id)


def read_parquet_release(
    dataset: Dataset, path: Path
) -> Iterable[tuple[int, dict[str, Any] | RecordProblem]]:
    """The rows of a parquet file (Hugging Face's format) with their 1-based row numbers, its hash
    recorded in `dataset`; an unreadable file or rest of one is a problem, as for JSON."""
    from expvid.suites.parquet_io import file_sha256, parquet_records

    try:
        digest = file_sha256(path)
    except OSError as error:
        dataset.add_invalid(FileProblem(path, 0, f"cannot read the file ({error.strerror or error})"), None)
        return []
    dataset.file_hashes[_release_key(dataset, path)] = digest
    return parquet_records(path)


def _release_key(dataset: Dataset, path: Path) -> str:
    try:
        return path.relative_to(dataset.root).as_posix()
    except ValueError:
        return path.name


def read_json_release(dataset: Dataset, path: Path) -> Iterable[tuple[int, dict[str, Any] | RecordProblem]]:
    """The records of a JSON array or JSON Lines file, its hash recorded in `dataset` (relative to
    its root); nothing when the file cannot be read (the problem is recorded)."""
    data = read_release_bytes(path)
    if isinstance(data, RecordProblem):
        dataset.add_invalid(data, None)
        return []
    dataset.file_hashes[_release_key(dataset, path)] = hashlib.sha256(data).hexdigest()
    return json_records(path, data)
