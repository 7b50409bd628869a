"""What every suite loader returns: every record of the task files accounted for, and a fingerprint.

A loader never drops a record silently and never stops at the first bad one. Each record of a task
file ends up as exactly one of:

- an `Item` (its media may be missing on disk: that is found later and scored as a media failure,
  exactly like a corrupt file, so a partial download can never shrink a task's denominator);
- an `InvalidRecord` (malformed: bad JSON, a missing field, an answer not among the options, a
  duplicate id): counted in its task's denominator and scored 0;
- part of a `FileProblem`: the file (or its rest) could not be read at all, so how many records it
  held is unknown. The runner refuses to evaluate such a dataset; nothing else is refused.

The fingerprint hashes the annotation files' bytes and the names and sizes of the media the items
point to (present or missing), so two runs on different partial downloads never look alike.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from expvid.schema import AnswerType, ImagesRef, Item, RecordProblem, VideoRef


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


@dataclass(frozen=True)
class FileProblem(RecordProblem):
    """A whole file, or its rest from `line` on, could not be read: an unknown number of records."""


@dataclass(frozen=True)
class InvalidRecord:
    """A record that could not become an item; it stays in its task's denominator, scored 0."""

    problem: RecordProblem
    #: The task the record belongs to, when that much could be read from it (None: unknown).
    task: str | None
    #: The record's own id, when readable.
    source_id: str | None = None
    #: Position of the record among all records read (file order), to apply `--limit` to records.
    position: int = 0

    @property
    def id(self) -> str:
        """A stable id for reports and item_scores.jsonl: task, file name and line."""
        return f"{self.task or '?'}/invalid@{self.problem.path.name}:{self.problem.line}"


@dataclass(frozen=True)
class MediaFile:
    """A media file items point to: where, how many items use it, and its size (None: missing)."""

    key: str  # path relative to the dataset root (the file name when outside it)
    path: Path
    size: int | None
    items: int


def fingerprint_of(suite: str, file_hashes: Mapping[str, str], media: Mapping[str, int | None]) -> str:
    """sha256 over the suite, the annotation files' hashes and the media names and sizes."""
    digest = hashlib.sha256(annotations_digest(suite, file_hashes).encode())
    for key in sorted(media):
        size = media[key]
        digest.update(f"media\0{key}\0{'missing' if size is None else size}\n".encode())
    return digest.hexdigest()


def annotations_digest(suite: str, file_hashes: Mapping[str, str]) -> str:
    """sha256 over the suite name and the annotation files' bytes: what run directories made
    before media were fingerprinted recorded as their dataset fingerprint."""
    digest = hashlib.sha256(f"suite={suite}\n".encode())
    for relative in sorted(file_hashes):
        digest.update(f"{relative}\0{file_hashes[relative]}\n".encode())
    return digest.hexdigest()


def media_paths(item: Item) -> tuple[str, ...]:
    """The files an item's media lives in (a video, or a list of images)."""
    if isinstance(item.media, VideoRef):
        return (item.media.path,)
    if isinstance(item.media, ImagesRef):
        return item.media.paths
    return ()


@dataclass
class Dataset:
    """Everything loaded from one dataset root: items, invalid records and unreadable files."""

    suite: str
    root: Path
    items: list[Item] = field(default_factory=list)
    #: Every problem met while loading, as `file:line: message` (invalid records and file problems).
    problems: list[RecordProblem] = field(default_factory=list)
    #: Specs of the tasks whose files were read, in the suite's canonical order.
    tasks: tuple[TaskSpec, ...] = ()
    #: Annotation file (relative to `root`) -> sha256 of its bytes as read.
    file_hashes: dict[str, str] = field(default_factory=dict)
    #: Records that could not become items (each also in `problems`).
    invalid: list[InvalidRecord] = field(default_factory=list)
    #: Files, or rests of files, that could not be read: records lost in unknown number.
    unreadable: list[FileProblem] = field(default_factory=list)
    #: The task each unreadable file belongs to, when a file holds one task only (ExpVid).
    unreadable_tasks: dict[FileProblem, str | None] = field(default_factory=dict)
    #: Item id -> position among all records read (file order), shared with `InvalidRecord.position`.
    positions: dict[str, int] = field(default_factory=dict)
    _records_read: int = 0
    _media: dict[str, MediaFile] | None = field(default=None, repr=False)
    #: Media named by records that were not loaded as items (tasks not chosen), for the fingerprint.
    _fingerprint_media: list[str] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    # -- loading ---------------------------------------------------------------------------------

    def add_item(self, item: Item) -> None:
        self.items.append(item)
        self.positions[item.id] = self._next_position()
        self._media = None

    def add_invalid(self, problem: RecordProblem, task: str | None, source_id: str | None = None) -> None:
        """Count a malformed record (or, for a `FileProblem`, a file whose records cannot be counted)."""
        self.problems.append(problem)
        if isinstance(problem, FileProblem):
            self.unreadable.append(problem)
            self.unreadable_tasks[problem] = task
            return
        self.invalid.append(InvalidRecord(problem, task, source_id, self._next_position()))

    def add_fingerprint_media(self, path: str | Path) -> None:
        """A media file a record of a task not loaded names: in the fingerprint, in no item."""
        self._fingerprint_media.append(os.fspath(path))
        self._media = None

    def _next_position(self) -> int:
        self._records_read += 1
        return self._records_read

    # -- views -----------------------------------------------------------------------------------

    def by_task(self) -> dict[str, list[Item]]:
        """Items grouped by task, tasks in the suite's order (then any others in first-seen order)."""
        groups: dict[str, list[Item]] = {spec.name: [] for spec in self.tasks}
        for item in self.items:
            groups.setdefault(item.task, []).append(item)
        return {task: items for task, items in groups.items() if items}

    def invalid_by_task(self) -> dict[str | None, list[InvalidRecord]]:
        groups: dict[str | None, list[InvalidRecord]] = {}
        for record in self.invalid:
            groups.setdefault(record.task, []).append(record)
        return groups

    def get(self, item_id: str) -> Item:
        """The item with this id; `KeyError` naming the id when there is none."""
        for item in self.items:
            if item.id == item_id:
                return item
        raise KeyError(f"no item {item_id!r} in the {self.suite} dataset at {self.root}")

    def media_files(self) -> dict[str, MediaFile]:
        """The media files the items point to, by key, with their sizes (stat once, remembered)."""
        if self._media is None:  # strings, not Paths: the full release names ~8,000 files
            uses: dict[str, tuple[str, int]] = {}
            for item in self.items:
                for raw in media_paths(item):
                    key = self._media_key(raw)
                    path, count = uses.get(key, (raw, 0))
                    uses[key] = (path, count + 1)
            for other in self._fingerprint_media:
                uses.setdefault(self._media_key(other), (other, 0))
            self._media = {
                key: MediaFile(key, Path(path), _size(path), count)
                for key, (path, count) in sorted(uses.items())
            }
        return self._media

    def media_keys(self, item: Item) -> list[str]:
        """The keys (see `media_files`) of the files an item's media lives in."""
        return [self._media_key(raw) for raw in media_paths(item)]

    def missing_media(self) -> list[MediaFile]:
        return [media for media in self.media_files().values() if media.size is None]

    def _media_key(self, path: str | Path) -> str:
        """The path relative to the root (POSIX separators), or its file name when outside it:
        `Path.relative_to` done on strings (paths here are absolute and normalised)."""
        text = os.fspath(path)
        root = os.fspath(self.root)
        prefix = root if root.endswith(os.sep) else root + os.sep
        if text.startswith(prefix):
            relative = text[len(prefix) :]
            return relative.replace(os.sep, "/") if os.sep != "/" else relative
        return os.path.basename(text)

    # -- fingerprints ----------------------------------------------------------------------------

    def media_sizes(self) -> dict[str, int | None]:
        return {key: media.size for key, media in self.media_files().items()}

    def fingerprint(self) -> str:
        """Stable sha256 over the suite, the annotation files' bytes and the media names and sizes.

        Independent of where the dataset lives on disk and of read order, so two copies of the same
        release give the same fingerprint; any edit to a question or answer, and any media file
        missing, added or of another size (a partial or damaged download), changes it.
        """
        return fingerprint_of(self.suite, self.file_hashes, self.media_sizes())

    def annotations_fingerprint(self) -> str:
        """sha256 over the annotation files only: what scoring depends on (no media needed)."""
        return annotations_digest(self.suite, self.file_hashes)


def _size(path: str | Path) -> int | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None
