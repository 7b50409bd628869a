"""How a suite's Hub release is laid out: which files hold the questions, which media an item needs.

A fetch happens in two passes (`expvid.hub.fetch`): the annotation files of the selected tasks
first (small), then exactly the media those questions reference, read from the questions
themselves rather than guessed from folder names, so selecting `--tasks tools` downloads only the
tools clips. A layout answers, for one suite: what to select, which repo files are annotations,
how to load them (the suite's own loader, so a fetched release reads exactly like a local one) and
which repo file each item's media is. Each suite gives its layout (`suite.hub_layout()`);
`TaskFilesLayout` serves every release whose tasks' annotation files are at their `TaskSpec.path`
and whose items name their media by repo path (ExpVid's release, and any suite that lays its
release out the same way).

A release that is not on the Hub is described instead (`GitHubRelease`: question files pinned to a
commit of a GitHub repository), and `expvid.hub.github_release` fetches it.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from expvid.schema import DataError, ImagesRef, VideoRef
from expvid.schema.dataset import Dataset

#: Archive suffixes a release may pack its media in (lmms-eval unpacks the same kinds).
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")


@dataclass(frozen=True)
class Selection:
    """What the user asked for, resolved against the suite: task names (and languages, where a
    release has several)."""

    tasks: tuple[str, ...]
    levels: tuple[int, ...] | None = None
    languages: tuple[str, ...] | None = None


class Layout(Protocol):
    suite: str

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection: ...

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        """(repo paths to download first, problems)."""
        ...

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        """Turn downloaded annotation files into what the loader reads; returns problems."""
        ...

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset: ...

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
        """(repo paths of the media the items need, problems for media the repo does not have)."""
        ...

    def place_media(self, root: Path, downloaded: set[str]) -> list[str]:
        """Unpack archives / link files where the loader looks; returns problems."""
        ...


def _relative(path: str, root: Path) -> str:
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return resolved.name


class TaskFilesLayout:
    """Annotation files at each selected task's `TaskSpec.path`; media at the items' repo paths."""

    def __init__(self, suite: Any) -> None:
        self.the_suite = suite
        self.suite: str = suite.name

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection:
        specs = self.the_suite.tasks
        names = [spec.name for spec in specs]
        if languages:
            raise DataError(f"{self.suite} has no languages to select")
        bad = [t for t in tasks or () if t not in names]
        if bad:
            raise DataError(f"unknown {self.suite} task(s) {bad}; tasks are: {', '.join(names)}")
        known_levels = sorted({spec.level for spec in specs if spec.level is not None})
        for level in levels or ():
            if level not in known_levels:
                shown = ", ".join(map(str, known_levels)) or "none"
                raise DataError(f"{self.suite} levels are {shown}; got {level}")
        chosen = tuple(
            spec.name
            for spec in specs
            if (not tasks or spec.name in tasks) and (not levels or spec.level in levels)
        )
        if not chosen:
            raise DataError(f"no {self.suite} task matches --tasks and --levels together")
        return Selection(chosen, tuple(levels) if levels else None)

    def _paths(self, tasks: Sequence[str]) -> list[str]:
        by_name = {spec.name: spec.path for spec in self.the_suite.tasks}
        return list(dict.fromkeys(by_name[name] for name in tasks))

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        paths = self._paths(selection.tasks)
        missing = [p for p in paths if p not in listing]
        return [p for p in paths if p in listing], [
            f"{p}: not in the repository at this revision" for p in missing
        ]

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        return []

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset:
        by_name = {spec.name: spec.path for spec in self.the_suite.tasks}
        present = [t for t in selection.tasks if (root / by_name[t]).is_file()]
        dataset: Dataset = self.the_suite.load(root, tasks=present, check_media=check_media)
        return dataset

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
        needed: set[str] = set()
        problems = []
        for item in dataset.items:
            if isinstance(item.media, VideoRef):
                kind, sources = "video", [item.media.source_path or _relative(item.media.path, root)]
            elif isinstance(item.media, ImagesRef):
                kind, sources = "image", [_relative(path, root) for path in item.media.paths]
            else:
                continue
            for source in sources:
                path = posixpath.normpath(source.replace("\\", "/")).lstrip("./")
                if path in listing:
                    needed.add(path)
                else:
                    problems.append(
                        f"{item.id}: its {kind} {source} is not in the repository at this revision"
                    )
        return needed, problems

    def place_media(self, root: Path, downloaded: set[str]) -> list[str]:
        return []


def link_file(source: Path, target: Path) -> None:
    """Make `target` the same file as `source` (hard link, else a copy); an existing target is kept."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def unpack_archive(archive: Path, into: Path) -> list[str]:
    """Unpack `archive` into `into`, skipping members already there; refuses paths that leave `into`."""
    import tarfile
    import zipfile

    root = into.resolve()
    try:
        if archive.suffix == ".zip":
            with zipfile.ZipFile(archive) as packed:
                for member in packed.infolist():
                    target = (root / member.filename).resolve()
                    if not target.is_relative_to(root):
                        return [f"{archive}: member {member.filename!r} would be written outside {root}"]
                    if not target.exists():
                        packed.extract(member, root)
        else:
            with tarfile.open(archive) as packed:
                members = [m for m in packed.getmembers() if not (root / m.name).exists()]
                packed.extractall(root, members=members, filter="data")
    except (OSError, zipfile.BadZipFile, tarfile.TarError) as error:
        return [f"{archive}: cannot unpack ({error})"]
    return []


@dataclass(frozen=True)
class GitHubRelease:
    """Question files in a GitHub repository (a suite's `github_release`), fetched pinned to a commit.

    The media are not fetched: `external_media` tells the user where to get them (`{root}`: the
    fetched folder, `{n}`: how many media files the questions reference).
    """

    repo: str
    files: tuple[str, ...]
    license: str
    external_media: str
    #: How errors name the release and its tasks ("unknown LABEL TASK_NOUN(s) ...").
    label: str
    task_noun: str = "task"
