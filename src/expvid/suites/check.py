"""Checking a loaded dataset before spending model time on it: records and media, with counts.

`expvid data check` and `expvid eval` see the same accounting: each record of a task file is an
item or an invalid record (`Dataset`), and each item's media is present and readable or not. A
partial download (videos missing or cut short) and a hand-edited file (bad JSON, an answer not
among the options) are found here, listed by file and line or by path, and counted per task, so
nobody learns about them from a score that is lower than it should be.

Reading media: "exists" only stats the files; "read" (the default) also opens every video and
reads all its packets (no decoding: the same index the sampler builds, which catches a missing or
unreadable file and one cut short by an interrupted copy) and verifies every image; "decode" also
decodes every frame of every video (`expvid.media.verify`: slow, about a full playback's decoding
work, but it finds a damaged middle section that reading packets cannot see). Files are read by a
few threads at once.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from expvid.schema import VideoRef
from expvid.schema.dataset import Dataset, FileProblem, InvalidRecord, MediaFile, media_paths

MediaCheck = Literal["none", "exists", "read", "decode"]


@dataclass(frozen=True)
class MediaProblem:
    """A media file some items need that is missing or cannot be read."""

    key: str
    path: Path
    problem: str  # "missing", or why it cannot be read
    items: int  # how many items use it

    @property
    def missing(self) -> bool:
        return self.problem == "missing"

    def __str__(self) -> str:
        return f"{self.path}: {self.problem} (needed by {self.items} item(s))"


@dataclass
class TaskCheck:
    """One task's records: how many, how many usable, and what is wrong with the rest."""

    task: str
    level: int | None
    records: int = 0
    items: int = 0
    invalid: int = 0
    #: Items whose media file is missing / present but unreadable (scored as media failures).
    media_missing: int = 0
    media_unreadable: int = 0

    @property
    def ok(self) -> bool:
        return not (self.invalid or self.media_missing or self.media_unreadable)


@dataclass
class DataCheck:
    dataset: Dataset
    media_check: MediaCheck
    tasks: list[TaskCheck] = field(default_factory=list)
    media_problems: list[MediaProblem] = field(default_factory=list)

    @property
    def unattributed(self) -> list[InvalidRecord]:
        """Invalid records whose task could not be read (a line that is not JSON at all, ...)."""
        return [record for record in self.dataset.invalid if record.task is None]

    @property
    def unreadable_files(self) -> list[FileProblem]:
        return self.dataset.unreadable

    @property
    def n_invalid(self) -> int:
        return len(self.dataset.invalid)

    @property
    def ok(self) -> bool:
        return not (self.dataset.problems or self.media_problems)


def check_dataset(dataset: Dataset, media: MediaCheck = "read", *, workers: int = 4) -> DataCheck:
    """Count every task's records, invalid records and items whose media is missing or unreadable."""
    result = DataCheck(dataset=dataset, media_check=media)
    if media != "none":
        result.media_problems = _media_problems(dataset, media, workers)
    bad = {problem.key: problem for problem in result.media_problems}
    levels = {spec.name: spec.level for spec in dataset.tasks}
    rows: dict[str, TaskCheck] = {spec.name: TaskCheck(spec.name, spec.level) for spec in dataset.tasks}
    for item in dataset.items:
        row = rows.setdefault(item.task, TaskCheck(item.task, levels.get(item.task, item.level)))
        row.records += 1
        row.items += 1
        problems = [bad[key] for key in dataset.media_keys(item) if key in bad]
        if any(problem.missing for problem in problems):
            row.media_missing += 1
        elif problems:
            row.media_unreadable += 1
    for record in dataset.invalid:
        if record.task is None:
            continue
        row = rows.setdefault(record.task, TaskCheck(record.task, levels.get(record.task)))
        row.records += 1
        row.invalid += 1
    result.tasks = list(rows.values())
    return result


def _media_problems(dataset: Dataset, media: MediaCheck, workers: int) -> list[MediaProblem]:
    read = media in ("read", "decode")
    files = [entry for entry in dataset.media_files().values() if entry.items]  # not other tasks' media
    videos = {
        path for item in dataset.items if isinstance(item.media, VideoRef) for path in media_paths(item)
    }

    def one(entry: MediaFile) -> MediaProblem | None:
        if entry.size is None:
            return MediaProblem(entry.key, entry.path, "missing", entry.items)
        if not read:
            return None
        video_reader = _decode_video if media == "decode" else _read_video
        reader: Callable[[Path], str | None] = video_reader if str(entry.path) in videos else _read_image
        problem = reader(entry.path)
        return None if problem is None else MediaProblem(entry.key, entry.path, problem, entry.items)

    if read and len(files) > 1 and workers > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(one, files))
    else:
        found = [one(entry) for entry in files]
    return [problem for problem in found if problem is not None]


def _read_video(path: Path) -> str | None:
    from expvid.media.errors import MediaError
    from expvid.media.index import build_index

    try:
        build_index(path)
    except MediaError as error:
        return error.problem
    return None


def _decode_video(path: Path) -> str | None:
    from expvid.media.verify import decode_problem

    return decode_problem(path)


def _read_image(path: Path) -> str | None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.verify()
    except (OSError, UnidentifiedImageError, SyntaxError) as error:
        return f"not a readable image ({error})"
    return None
