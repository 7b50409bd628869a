"""`expvid score --from lmms-eval LOGDIR`: score lmms-eval's logged samples with expvid, item by item.

lmms-eval (`--log_samples`) writes `<output_path>/<model>/<date>_samples_<task>.jsonl`, one line per
document. Since 0.4 a line holds `doc_id`, `target`, `filtered_resps` (and `resps` when a filter
changed them), `doc_hash`, `input`, and each metric's per-document value; before 0.4 it also held
`doc` and `arguments`, and wrapped responses one list deeper. Both are read.

Each line is matched to an expvid item: through the `expvid_id` that tasks exported by
`expvid export lmms-eval` put in their metric value; else through the logged `doc` (ExpVid `id`;
SciVideoBench `video_id`/`question_id`/`question_type`); else through `doc_id`, the document's
position in the task's test split, which for these JSON releases is the record's position in the
release file (checked against the logged `target`). The text lmms-eval scored (`filtered_resps`) is
then scored by expvid, and both tools' per-item scores are written side by side.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.schema import DataError, RecordProblem, read_jsonl

_SAMPLES = re.compile(r"^(?P<date>.*?)_?samples_(?P<task>.+)\.jsonl$")
_STANDARD_KEYS = {
    "doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash",
    "target_hash", "input", "token_counts", "input_media",
}  # fmt: skip


@dataclass
class LoggedSample:
    path: Path
    line: int
    lmms_task: str
    doc_id: int | None
    doc: dict[str, Any] | None
    target: str | None
    response: str | None
    metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def expvid_id(self) -> str | None:
        for value in self.metrics.values():
            if isinstance(value, dict) and isinstance(value.get("expvid_id"), str):
                return str(value["expvid_id"])
        return None


def sample_files(logdir: Path) -> list[Path]:
    """The newest `*samples_<task>.jsonl` per (folder, task) under `logdir` (lmms-eval dates its files)."""
    if logdir.is_file():
        return [logdir]
    newest: dict[tuple[Path, str], Path] = {}
    for path in sorted(logdir.rglob("*samples_*.jsonl")):
        match = _SAMPLES.match(path.name)
        if match is None:
            continue
        key = (path.parent, match["task"])
        if key not in newest or path.name > newest[key].name:
            newest[key] = path
    return sorted(newest.values())


def lmms_task_of(path: Path) -> str:
    match = _SAMPLES.match(path.name)
    return match["task"] if match else path.stem


def read_samples(path: Path) -> Iterator[LoggedSample | RecordProblem]:
    task = lmms_task_of(path)
    for number, record in read_jsonl(path):
        if isinstance(record, RecordProblem):
            yield record
            continue
        if "doc_id" not in record or not ({"filtered_resps", "resps"} & set(record)):
            yield RecordProblem(path, number, "not an lmms-eval sample (no doc_id / filtered_resps)")
            continue
        doc = record.get("doc") if isinstance(record.get("doc"), dict) else None
        response = _first_text(record.get("filtered_resps", record.get("resps")))
        metrics = {k: v for k, v in record.items() if k not in _STANDARD_KEYS}
        doc_id = record["doc_id"]
        yield LoggedSample(
            path=path,
            line=number,
            lmms_task=task,
            doc_id=doc_id if isinstance(doc_id, int) else None,
            doc=doc,
            target=None if record.get("target") is None else str(record["target"]),
            response=response,
            metrics=metrics,
        )


def _first_text(value: Any) -> str | None:
    """lmms-eval nests responses per request and per repeat; the scored text is the first string inside."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    return value if isinstance(value, str) else None


def lmms_eval_score(metrics: dict[str, Any]) -> tuple[str, float] | None:
    """(metric name, 0-1 score of this document) as lmms-eval's own task computed it, when it can be read."""
    for name, value in metrics.items():
        if isinstance(value, bool | int | float):
            return name, float(value)
        if isinstance(value, dict):
            if "earned" in value and "possible" in value and value["possible"]:
                return name, float(value["earned"]) / float(value["possible"])
            for key in ("correct", "score", "acc", "accuracy"):
                if isinstance(value.get(key), bool | int | float):
                    return name, float(value[key])
    return None


# -- matching samples to items -------------------------------------------------------------------------


class Matcher:
    """Maps logged samples of one suite to expvid item ids."""

    def __init__(self, suite: str, root: Path) -> None:
        if suite not in ("expvid", "scivideobench"):
            raise DataError(f"--from lmms-eval reads ExpVid and SciVideoBench logs; got suite {suite!r}")
        self.suite = suite
        self.root = root
        self._records: dict[str, list[dict[str, Any]]] = {}

    def task_of(self, lmms_task: str) -> str | None:
        """The expvid task an lmms-eval task name stands for (`expvid_tools` -> tools); None for a whole-suite task."""
        if self.suite == "scivideobench":
            return None
        from expvid.suites.expvid_suite import EXPVID_TASKS

        found = [
            spec.name
            for spec in EXPVID_TASKS
            if lmms_task == spec.name or lmms_task.endswith("_" + spec.name)
        ]
        return max(found, key=len) if found else None

    def item_id(self, sample: LoggedSample) -> str:
        """The item id, or raise `LookupError` saying why it cannot be found."""
        direct = sample.expvid_id()
        if direct is not None:
            return direct
        task = self.task_of(sample.lmms_task)
        doc = sample.doc
        if doc is None:
            doc = self._doc_at(task, sample)
        if self.suite == "expvid":
            if task is None:
                raise LookupError(f"lmms-eval task {sample.lmms_task!r} is not one of ExpVid's tasks")
            return f"{task}/{doc['id']}"
        from expvid.suites.scivideobench.spec import QUESTION_TYPES

        kind = QUESTION_TYPES.get(str(doc.get("question_type")))
        if kind is None:
            raise LookupError(f"question_type {doc.get('question_type')!r} is not a SciVideoBench type")
        return f"{str(doc['video_id']).strip()}/{str(doc['question_id']).strip()}/{kind}"

    def _doc_at(self, task: str | None, sample: LoggedSample) -> dict[str, Any]:
        if sample.doc_id is None:
            raise LookupError("the line has neither the document nor a doc_id")
        records = self._release_records(task)
        if not 0 <= sample.doc_id < len(records):
            raise LookupError(
                f"doc_id {sample.doc_id} is outside the {len(records)} record(s) of the release file"
            )
        doc = records[sample.doc_id]
        expected = _target_of(self.suite, doc)
        if sample.target is not None and expected is not None and sample.target.strip() != expected:
            raise LookupError(
                f"doc_id {sample.doc_id}: the logged target {sample.target!r} is not the release's answer {expected!r} "
                "(the log was made from other data, or in another order)"
            )
        return doc

    def _release_records(self, task: str | None) -> list[dict[str, Any]]:
        key = task or ""
        if key not in self._records:
            if self.suite == "expvid":
                from expvid.suites.expvid_suite import task_spec

                if task is None:
                    raise LookupError("cannot tell which ExpVid task this log is")
                path = self.root / task_spec(task).path
            else:
                from expvid.suites.scivideobench.loader import release_file

                path = release_file(self.root)
            from expvid.suites.release_io import json_records, read_release_bytes

            data = read_release_bytes(path)
            if isinstance(data, RecordProblem):
                raise DataError([data])
            self._records[key] = [r for _, r in json_records(path, data) if not isinstance(r, RecordProblem)]
        return self._records[key]


def _target_of(suite: str, doc: dict[str, Any]) -> str | None:
    answer = doc.get("answer")
    if suite == "scivideobench" or isinstance(answer, str):
        return str(answer).strip() if answer is not None else None
    return None  # list / number answers: lmms-eval's str() of them depends on the task's doc_to_target
