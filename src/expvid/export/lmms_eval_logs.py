"""`expvid score --from lmms-eval LOGDIR`: score lmms-eval's logged samples with expvid, item by item.

lmms-eval (`--log_samples`) writes `<output_path>/<model>/<date>_samples_<task>.jsonl`, one line per
document. Since 0.4 a line holds `doc_id`, `target`, `filtered_resps` (and `resps` when a filter
changed them), `doc_hash`, `input`, and each metric's per-document value; before 0.4 it also held
`doc` and `arguments`, and wrapped responses one list deeper. Both are read.

Each line is matched to an expvid item: through the `expvid_id` that tasks exported by
`expvid export lmms-eval` put in their metric value; else through the logged `doc` (read by the
suite's `item_from_record`: ExpVid's `id`, or whatever fields identify another suite's record); else through `doc_id`, the document's
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
    """Maps logged samples of one suite to expvid item ids, by what the suite says of its lmms-eval tasks.

    A suite takes part through `lmms_eval_tasks` (lmms-eval task name, or its last part after the
    package prefix -> the expvid task, or None when one lmms-eval task holds the whole suite) and,
    where its task logs the item's id in a metric value, `lmms_eval_item_id(metrics)`.
    """

    def __init__(self, suite: str, root: Path) -> None:
        from expvid.suites.registry import get_suite

        self.suite = suite
        self.the_suite: Any = get_suite(suite)
        self.tasks: dict[str, str | None] = dict(getattr(self.the_suite, "lmms_eval_tasks", None) or {})
        if not self.tasks:
            raise DataError(f"--from lmms-eval: the {suite} suite names no lmms-eval task it can read")
        self.root = root
        self._loaded: dict[str, Any] = {}

    def owns(self, lmms_task: str) -> bool:
        return self._task_key(lmms_task) is not None

    def _task_key(self, lmms_task: str) -> str | None:
        found = [name for name in self.tasks if lmms_task == name or lmms_task.endswith("_" + name)]
        return max(found, key=len) if found else None

    def task_of(self, lmms_task: str) -> str | None:
        """The expvid task an lmms-eval task stands for (`expvid_tools` -> tools); None for a whole-suite task."""
        key = self._task_key(lmms_task)
        return None if key is None else self.tasks[key]

    def item_id(self, sample: LoggedSample) -> str:
        """The item id, or raise `LookupError` saying why it cannot be found."""
        direct = sample.expvid_id()
        hook = getattr(self.the_suite, "lmms_eval_item_id", None)
        if direct is None and callable(hook):
            direct = hook(sample.metrics)
        if direct is not None:
            return direct
        if not self.owns(sample.lmms_task):
            raise LookupError(f"lmms-eval task {sample.lmms_task!r} is not one of {self.suite}'s")
        task = self.task_of(sample.lmms_task)
        if sample.doc is not None:
            return self._item_from_record(sample.doc, task).id
        return self._item_at(task, sample).id

    def _item_from_record(self, record: dict[str, Any], task: str | None) -> Any:
        from expvid.suites.records import RecordError

        try:
            return self.the_suite.item_from_record(record, task, self.root)
        except RecordError as error:
            raise LookupError(f"the logged document is not a {self.suite} record: {error}") from None

    def _item_at(self, task: str | None, sample: LoggedSample) -> Any:
        """The record at `doc_id` in the release file(s) the lmms-eval task reads, checked by `target`."""
        if sample.doc_id is None:
            raise LookupError("the line has neither the document nor a doc_id")
        key = task or ""
        if key not in self._loaded:
            dataset = self.the_suite.load(self.root, tasks=[task] if task else None, check_media=False)
            by_position = {position: item_id for item_id, position in dataset.positions.items()}
            items = {item.id: item for item in dataset.items}
            invalid = {record.position for record in dataset.invalid}
            self._loaded[key] = (by_position, items, invalid, len(by_position) + len(invalid))
        by_position, items, invalid, total = self._loaded[key]
        position = sample.doc_id + 1
        if not 0 < position <= total:
            raise LookupError(f"doc_id {sample.doc_id} is outside the {total} record(s) of the release file")
        if position in invalid:
            raise LookupError(f"doc_id {sample.doc_id} is an invalid record of the release file")
        item = items[by_position[position]]
        expected = item.answer if isinstance(item.answer, str) else None
        if sample.target is not None and expected is not None and sample.target.strip() != expected:
            raise LookupError(
                f"doc_id {sample.doc_id}: the logged target {sample.target!r} is not the release's answer {expected!r} "
                "(the log was made from other data, or in another order)"
            )
        return item
