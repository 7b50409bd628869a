"""How each suite's Hub release is laid out: which files hold the questions, which media an item needs.

A fetch happens in two passes (`expvid.hub.fetch`): the annotation files of the selected tasks
first (small), then exactly the media those questions reference, read from the questions
themselves rather than guessed from folder names, so selecting `--tasks tools` downloads only the
tools clips. A layout answers, for one suite: what to select, which repo files are annotations,
how to load them (the suite's own loader, so a fetched release reads exactly like a local one) and
which repo file each item's media is.
"""

from __future__ import annotations

import os
import posixpath
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from expvid.schema import DataError, ImagesRef, VideoRef
from expvid.suites.base import Dataset

#: Archive suffixes a release may pack its media in (lmms-eval unpacks the same kinds).
ARCHIVES = (".zip", ".tar", ".tar.gz", ".tgz")


@dataclass(frozen=True)
class Selection:
    """What the user asked for, resolved against the suite: task names (and SFE languages)."""

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
    return Path(path).resolve().relative_to(root.resolve()).as_posix()


class ExpVidLayout:
    """`annotations/level{1,2,3}/<task>.jsonl`; each record's `video_path` is a repo path."""

    suite = "expvid"

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection:
        from expvid.suites.expvid_suite import EXPVID_TASKS, task_spec

        if languages:
            raise DataError("--language applies to SFE only")
        for name in tasks or ():
            task_spec(name)  # DataError naming the valid tasks
        for level in levels or ():
            if level not in (1, 2, 3):
                raise DataError(f"ExpVid levels are 1, 2 and 3; got {level}")
        chosen = tuple(
            spec.name
            for spec in EXPVID_TASKS
            if (not tasks or spec.name in tasks) and (not levels or spec.level in levels)
        )
        if not chosen:
            raise DataError("no ExpVid task matches --tasks and --levels together")
        return Selection(chosen, tuple(levels) if levels else None)

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        from expvid.suites.expvid_suite import TASKS

        paths = [TASKS[name].path for name in selection.tasks]
        missing = [p for p in paths if p not in listing]
        return [p for p in paths if p in listing], [
            f"{p}: not in the repository at this revision" for p in missing
        ]

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        return []

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset:
        from expvid.suites.expvid_suite import TASKS, load_expvid

        present = [t for t in selection.tasks if (root / TASKS[t].path).is_file()]
        return load_expvid(root, tasks=present, check_media=check_media)

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
        needed: set[str] = set()
        problems = []
        for item in dataset.items:
            if not isinstance(item.media, VideoRef):
                continue
            source = item.media.source_path or _relative(item.media.path, root)
            path = posixpath.normpath(source.replace("\\", "/")).lstrip("./")
            if path in listing:
                needed.add(path)
            else:
                problems.append(f"{item.id}: its video {source} is not in the repository at this revision")
        return needed, problems

    def place_media(self, root: Path, downloaded: set[str]) -> list[str]:
        return []


class SciVideoBenchLayout:
    """One question file at the repo root; videos `jove_<video_id>.mp4` (or .MP4 / .mkv), maybe in archives."""

    suite = "scivideobench"

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection:
        from expvid.suites.scivideobench.spec import TASKS

        if levels or languages:
            raise DataError("--levels applies to ExpVid and --language to SFE only")
        names = [spec.name for spec in TASKS]
        bad = [t for t in tasks or () if t not in names]
        if bad:
            raise DataError(f"unknown SciVideoBench task(s) {bad}; tasks are: {', '.join(names)}")
        return Selection(tuple(t for t in names if not tasks or t in tasks))

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        from expvid.suites.scivideobench.spec import RELEASE_FILES

        for name in RELEASE_FILES:
            if name in listing:
                return [name], []
        root_json = [p for p in listing if "/" not in p and p.endswith((".json", ".jsonl"))]
        if len(root_json) == 1:
            return root_json, []
        return [], [f"no question file at the repository root (looked for {', '.join(RELEASE_FILES)})"]

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        from expvid.suites.scivideobench.spec import RELEASE_FILES

        for path in downloaded:
            if path not in RELEASE_FILES:  # give an unexpectedly named file the name the loader reads
                target = root / ("scivideobench.json" if path.endswith(".json") else "scivideobench.jsonl")
                _link(root / path, target)
        return []

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset:
        from expvid.suites.scivideobench import load_scivideobench

        return load_scivideobench(root, tasks=selection.tasks, check_media=check_media)

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
        from expvid.suites.scivideobench.spec import VIDEO_DIRS, VIDEO_SUFFIXES

        by_name: dict[str, list[str]] = {}
        for path in listing:
            by_name.setdefault(posixpath.basename(path), []).append(path)
        archives = sorted(p for p in listing if p.endswith(ARCHIVES))
        needed: set[str] = set()
        problems = []
        order = {folder: k for k, folder in enumerate(VIDEO_DIRS)}
        for video_id in dict.fromkeys(str(item.meta["video_id"]) for item in dataset.items):
            found = [
                path for suffix in VIDEO_SUFFIXES for path in by_name.get(f"jove_{video_id}{suffix}", [])
            ]
            if found:
                found.sort(key=lambda p: order.get(posixpath.dirname(p) or ".", len(order)))
                needed.add(found[0])
            elif archives:
                needed.update(archives)  # packed: every archive is needed, whatever the selection
            else:
                problems.append(f"video jove_{video_id}.mp4 (or .MP4 / .mkv) is not in the repository")
        return needed, problems

    def place_media(self, root: Path, downloaded: set[str]) -> list[str]:
        from expvid.suites.scivideobench.spec import VIDEO_DIRS

        problems = []
        for path in sorted(downloaded):
            if path.endswith(ARCHIVES):
                problems += _unpack(root / path, root)
            elif (posixpath.dirname(path) or ".") not in VIDEO_DIRS:
                _link(root / path, root / VIDEO_DIRS[0] / posixpath.basename(path))
        # Archives often hold a top folder: link any jove_* found below the root into videos/.
        for found in root.rglob("jove_*"):
            folder = found.parent.relative_to(root).as_posix()
            if found.is_file() and folder not in (*VIDEO_DIRS, ".") and ".cache" not in found.parts:
                _link(found, root / VIDEO_DIRS[0] / found.name)
        return problems


class SFELayout:
    """Per-language folders (`20250515-en/`, `en/`, ...) of JSON(L) or parquet records, plus images."""

    suite = "sfe"

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection:
        from expvid.suites.sfe.spec import LANGUAGES, TASKS

        if levels:
            raise DataError("--levels applies to ExpVid only (SFE cognitive levels are not separate files)")
        names = [spec.name for spec in TASKS]
        bad = [t for t in tasks or () if t not in names]
        if bad:
            raise DataError(f"unknown SFE task(s) {bad}; tasks are: {', '.join(names)}")
        chosen_languages = tuple(languages or ("en",))
        wrong = [lang for lang in chosen_languages if lang not in LANGUAGES]
        if wrong:
            raise DataError(f"SFE languages are {', '.join(LANGUAGES)}; got {wrong}")
        return Selection(tuple(t for t in names if not tasks or t in tasks), languages=chosen_languages)

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        chosen = []
        problems = []
        for language in selection.languages or ():
            found = [p for p in listing if _language_file(p, language)]
            if not found:
                problems.append(
                    f"no {language} records (a folder '{language}' or '*-{language}') in the repository"
                )
            chosen += sorted(found)
        return chosen, problems

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        # Nothing to convert: the SFE loader reads the Hub's parquet files as published and writes
        # their embedded images once into the image cache (`expvid.suites.sfe.parquet`).
        return []

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset:
        from expvid.suites.sfe.loader import load_sfe

        return load_sfe(
            root, languages=selection.languages or ("en",), tasks=selection.tasks, check_media=check_media
        )

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
        needed: set[str] = set()
        problems = []
        for item in dataset.items:
            if not isinstance(item.media, ImagesRef):
                continue
            raw_paths = item.meta.get("images_raw") or []
            for raw, resolved in zip(raw_paths, item.media.paths, strict=False):
                if Path(resolved).is_file():
                    continue  # already here (parquet images are decoded into the cache)
                # The loader's order: as written, then images/<name>, then next to a records file.
                candidates = [raw, f"images/{posixpath.basename(raw)}"]
                hit = next((c for c in candidates if c in listing), None)
                hit = hit or next((p for p in sorted(listing) if p.endswith("/" + raw)), None)
                if hit is None:
                    problems.append(f"{item.id}: image {raw} is not in the repository")
                else:
                    needed.add(hit)
        return needed, problems

    def place_media(self, root: Path, downloaded: set[str]) -> list[str]:
        return []


def _language_file(path: str, language: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    if not name.endswith((".json", ".jsonl", ".parquet")):
        return False
    if len(parts) == 1:
        stem = name.rsplit(".", 1)[0].lower()
        return stem == language or stem.endswith((f"_{language}", f"-{language}"))
    folder = parts[0].lower()
    return folder == language or folder.endswith((f"-{language}", f"_{language}"))


def _link(source: Path, target: Path) -> None:
    """Make `target` the same file as `source` (hard link, else a copy); an existing target is kept."""
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _unpack(archive: Path, into: Path) -> list[str]:
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


LAYOUTS: dict[str, Layout] = {
    "expvid": ExpVidLayout(),
    "scivideobench": SciVideoBenchLayout(),
    "sfe": SFELayout(),
}
