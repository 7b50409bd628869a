"""The run directory: a self-describing, append-only record of one evaluation.

    RUN_DIR/manifest.json       settings, versions, dataset fingerprint, samplers, judge (rewritten atomically)
    RUN_DIR/predictions.jsonl   one line per model answer or failure (append-only)
    RUN_DIR/judgments.jsonl     one line per judge decision or failure (append-only)
    RUN_DIR/item_scores.jsonl   per-item scores of the last scoring pass (rewritten)
    RUN_DIR/scores.json         the aggregate (rewritten atomically)

Append-only files are written one whole line per `os.write` on an O_APPEND descriptor, so a crash
(even SIGKILL) leaves at most one partial last line. Opening a file for appending repairs that: the
partial tail is cut off and its item is simply redone. When a key appears on several lines (a failed
request retried on resume), the last line wins.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from expvid.schema import DataError, Judgment, Prediction, RecordProblem, RunManifest

M = TypeVar("M", bound=BaseModel)

MANIFEST = "manifest.json"
PREDICTIONS = "predictions.jsonl"
JUDGMENTS = "judgments.jsonl"
ITEM_SCORES = "item_scores.jsonl"
SCORES = "scores.json"


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file and rename, so readers never see half a file."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text, encoding="utf-8")
    temp.replace(path)


class AppendLog:
    """An append-only JSONL file that survives being killed mid-write."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self.repaired_bytes = 0

    def open(self) -> AppendLog:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.repaired_bytes = _cut_partial_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return self

    def append(self, record: BaseModel) -> None:
        if self._fd is None:
            raise RuntimeError(f"{self.path} is not open for appending")
        line = record.model_dump_json() + "\n"
        os.write(self._fd, line.encode("utf-8"))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> AppendLog:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cut_partial_tail(path: Path) -> int:
    """Truncate a file to its last newline; returns how many bytes were cut."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as handle:
        handle.seek(-1, os.SEEK_END)
        if handle.read(1) == b"\n":
            return 0
        # Walk back to the last newline (lines are small; read the tail in blocks).
        position = size
        block = 65536
        while position > 0:
            start = max(0, position - block)
            handle.seek(start)
            chunk = handle.read(position - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                handle.truncate(keep)
                return size - keep
            position = start
        handle.truncate(0)
        return size


def read_records(path: Path, model: type[M]) -> Iterator[tuple[int, M | RecordProblem]]:
    """Each line of a run JSONL file as a model, or a problem naming file:line."""
    if not path.exists():
        return
    with path.open("r", encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.strip()
            if not text:
                continue
            if not raw.endswith("\n"):
                continue  # a partial last line: the item it described is redone
            try:
                yield number, model.model_validate_json(text)
            except ValidationError as error:
                yield number, RecordProblem(path, number, f"invalid record: {error.errors()[0]['msg']}")


def latest_by_key(path: Path, model: type[M], key: str) -> dict[tuple[str, int], M]:
    """Records keyed by (`key` field, sample), the last line winning; a corrupt line is an error."""
    latest: dict[tuple[str, int], M] = {}
    problems: list[RecordProblem] = []
    for _, record in read_records(path, model):
        if isinstance(record, RecordProblem):
            problems.append(record)
            continue
        latest[(str(getattr(record, key)), int(getattr(record, "sample", 0)))] = record
    if problems:
        raise DataError(problems)
    return latest


class _RunFile:
    """A file of every run directory: `rundir.scores_path` is `rundir.root / SCORES`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, rundir: RunDir, owner: type[RunDir]) -> Path:
        return rundir.root / self.name


class RunDir:
    """Paths and readers of one run directory."""

    manifest_path = _RunFile(MANIFEST)
    predictions_path = _RunFile(PREDICTIONS)
    judgments_path = _RunFile(JUDGMENTS)
    item_scores_path = _RunFile(ITEM_SCORES)
    scores_path = _RunFile(SCORES)

    def __init__(self, root: Path) -> None:
        self.root = root

    def exists(self) -> bool:
        return self.manifest_path.is_file()

    def read_manifest(self) -> RunManifest:
        try:
            return RunManifest.model_validate_json(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(f"{self.root}: not a run directory (no {MANIFEST})") from None
        except ValidationError as error:
            raise DataError(f"{self.manifest_path}: invalid manifest: {error.errors()[0]['msg']}") from None

    def write_manifest(self, manifest: RunManifest) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.manifest_path, manifest.model_dump_json(indent=2) + "\n")

    def predictions(self) -> dict[tuple[str, int], Prediction]:
        return latest_by_key(self.predictions_path, Prediction, "item_id")

    def judgments(self) -> dict[tuple[str, int], Judgment]:
        return latest_by_key(self.judgments_path, Judgment, "item_id")

    def write_json(self, name: str, value: object) -> None:
        write_atomic(self.root / name, json.dumps(value, indent=2, ensure_ascii=False) + "\n")
