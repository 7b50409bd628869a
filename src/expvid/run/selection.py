"""Which records a run covers: the chosen tasks, the first N records of each, and whether that is
the whole dataset.

`--limit N` takes the first N *records* of each task in file order, invalid ones included, so a
malformed line near the top of a file is scored 0 in a limited run exactly as in a full one. A run
that leaves records out (`--limit`, `--tasks`) is *partial*: every report labels it so, and its
rows are never shown beside a paper's rows without that label.

Partial is measured against the suite's full task list, not against the files on disk: a dataset
root holding only some task files (`expvid data fetch expvid DIR --tasks tools`) gives a partial
run, since an average over 1 of 4 Level-1 tasks is not the paper's Level-1 average.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from expvid.schema import DataError, Item
from expvid.schema.dataset import Dataset, InvalidRecord


@dataclass
class Selection:
    items: list[Item] = field(default_factory=list)
    #: Invalid records of the chosen tasks (scored 0), and those whose task is unknown.
    invalid: list[InvalidRecord] = field(default_factory=list)
    #: Why the run does not cover the whole dataset ("2 of 10 tasks (...) left out"), or None.
    partial: str | None = None


def _check_tasks(dataset: Dataset, tasks: Sequence[str]) -> None:
    known = {spec.name for spec in dataset.tasks} | {item.task for item in dataset.items}
    known |= {record.task for record in dataset.invalid if record.task is not None}
    unknown = [task for task in tasks if task not in known]
    if unknown:
        names = ", ".join(spec.name for spec in dataset.tasks)
        raise DataError(f"unknown task(s) {', '.join(unknown)}; this dataset has: {names}")


def select_records(
    dataset: Dataset,
    tasks: Sequence[str] | None,
    limit: int | None,
    suite_tasks: Sequence[str] | None = None,
) -> Selection:
    """The items and invalid records of the chosen tasks (all when None), the first `limit` records
    of each task in file order.

    `suite_tasks` is the suite's full task list (`[spec.name for spec in suite.tasks]`): tasks of
    it that were not chosen, or whose files the dataset does not hold, make the run partial. Without
    it, only the tasks present in `dataset` are the whole.
    """
    if tasks is not None:
        _check_tasks(dataset, tasks)
    items_by_task = dataset.by_task()
    invalid_by_task = dataset.invalid_by_task()
    present = list(dict.fromkeys([*items_by_task, *(t for t in invalid_by_task if t is not None)]))
    chosen = present if tasks is None else [task for task in tasks if task in present]
    selection = Selection()
    cut = 0
    most = 0
    for task in chosen:
        entries: list[tuple[int, Item | InvalidRecord]] = [
            (dataset.positions.get(item.id, index), item)
            for index, item in enumerate(items_by_task.get(task, []))
        ]
        entries += [(record.position, record) for record in invalid_by_task.get(task, [])]
        entries.sort(key=lambda entry: entry[0])
        most = max(most, len(entries))
        if limit is not None and len(entries) > limit:
            cut += 1
            entries = entries[:limit]
        for _, entry in entries:
            if isinstance(entry, InvalidRecord):
                selection.invalid.append(entry)
            else:
                selection.items.append(entry)
    selection.invalid += invalid_by_task.get(None, [])
    reasons = []
    if cut:
        reasons.append(f"at most {limit} of up to {most} records per task (--limit)")
    reasons += _tasks_missing(dataset, present, chosen, tasks, suite_tasks)
    selection.partial = "; ".join(reasons) or None
    return selection


def _tasks_missing(
    dataset: Dataset,
    present: Sequence[str],
    chosen: Sequence[str],
    tasks: Sequence[str] | None,
    suite_tasks: Sequence[str] | None,
) -> list[str]:
    """Why the chosen tasks are not the whole suite: tasks left out by `--tasks`, tasks whose files
    the dataset root does not hold (a partial download), or an empty list."""
    whole = list(dict.fromkeys([*(suite_tasks or ()), *present]))
    held = {spec.name for spec in dataset.tasks} | set(present)
    if tasks is not None:  # --tasks chose: every other task of the suite is left out
        left_out, absent = [task for task in whole if task not in chosen], []
    else:  # all chosen: tasks whose files the dataset does not hold are missing (an empty file is not)
        left_out, absent = [], [task for task in whole if task not in held]
    if not left_out and not absent:
        return []
    parts = []
    if left_out:
        parts.append(f"{', '.join(left_out)} left out")
    if absent:
        parts.append(f"{', '.join(absent)} not in the dataset")
    covered = len(whole) - len(left_out) - len(absent)
    return [f"{covered} of {len(whole)} tasks ({'; '.join(parts)})"]


def suite_task_names(suite: object) -> list[str]:
    """The suite's full task list (its `tasks` specs), the whole that partial is measured against."""
    return [spec.name for spec in getattr(suite, "tasks", ())]


def select_items(dataset: Dataset, tasks: Sequence[str] | None, limit: int | None) -> list[Item]:
    """The items of `select_records` (first `limit` records of each chosen task, in file order)."""
    return select_records(dataset, tasks, limit).items
