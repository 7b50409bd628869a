"""What every suite loader returns: the items it could use, the problems it met, and a fingerprint.

A loader never drops a bad record silently and never stops at the first one: good records become
`Item`s, bad ones become `RecordProblem`s (file:line), and the caller decides (strict or lenient).
The fingerprint hashes the annotation files' bytes only, so a run manifest can say exactly which
questions and answers were scored without hashing tens of gigabytes of video.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from expvid.schema import AnswerType, Item, RecordProblem


@dataclass(frozen=True)
class TaskSpec:
    """One task of a suite, as data: where its file lives and how it is answered and reported."""

    #: Task name; also the release file stem and the prefix of item ids ("tools/17").
    name: str
    level: int | None
    answer_type: AnswerType
    #: The task's name in the paper ("Completeness Verification" for `video_verification`).
    paper_name: str
    #: The results-table column label ("Veri."), so reports line up with the paper.
    column: str
    #: Annotation file, relative to the dataset root.
    path: str
    #: The paper's metric for the task ("accuracy", "jaccard", "blank_accuracy").
    metric: str


@dataclass
class Dataset:
    """Items loaded from one dataset root, with the problems found while loading them."""

    suite: str
    root: Path
    items: list[Item] = field(default_factory=list)
    problems: list[RecordProblem] = field(default_factory=list)
    #: Specs of the tasks whose files were read, in the suite's canonical order.
    tasks: tuple[TaskSpec, ...] = ()
    #: Annotation file (relative to `root`) -> sha256 of its bytes as read.
    file_hashes: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def by_task(self) -> dict[str, list[Item]]:
        """Items grouped by task, tasks in the suite's order (then any others in first-seen order)."""
        groups: dict[str, list[Item]] = {spec.name: [] for spec in self.tasks}
        for item in self.items:
            groups.setdefault(item.task, []).append(item)
        return {task: items for task, items in groups.items() if items}

    def get(self, item_id: str) -> Item:
        """The item with this id; `KeyError` naming the id when there is none."""
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(f"no item {item_id!r} in the {self.suite} dataset at {self.root}")

    def fingerprint(self) -> str:
        """Stable sha256 over the suite name and the annotation files' bytes (not the media).

        Independent of where the dataset lives on disk and of file read order, so two copies of
        the same release give the same fingerprint and any edit to a question or answer changes it.
        """
        digest = hashlib.sha256(f"suite={self.suite}\n".encode())
        for relative in sorted(self.file_hashes):
            digest.update(f"{relative}\0{self.file_hashes[relative]}\n".encode())
        return digest.hexdigest()
