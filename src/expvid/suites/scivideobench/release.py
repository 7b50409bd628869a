"""SciVideoBench's Hub release (`groundmore/scivideobench`): one question file, `jove_*` videos.

The question file sits at the repo root under one of the names the loader reads (another name is
linked to one); videos are `jove_<video_id>.mp4` (or .MP4 / .mkv), anywhere in the repo or packed in
archives, and are placed where the loader looks (`videos/`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from pathlib import Path

from expvid.schema import DataError
from expvid.schema.dataset import Dataset
from expvid.suites.release_layout import ARCHIVES, Selection, link_file, unpack_archive
from expvid.suites.scivideobench.spec import RELEASE_FILES, TASKS, VIDEO_DIRS, VIDEO_SUFFIXES


class SciVideoBenchLayout:
    """One question file at the repo root; videos `jove_<video_id>.mp4` (or .MP4 / .mkv), maybe in archives."""

    suite = "scivideobench"

    def __init__(self, load: Callable[..., Dataset]) -> None:
        #: The suite's loader (`SciVideoBenchSuite.load`), which hands the layout to `expvid data fetch`.
        self._load = load

    def select(
        self, tasks: Sequence[str] | None, levels: Sequence[int] | None, languages: Sequence[str] | None
    ) -> Selection:
        if levels or languages:
            raise DataError("--levels applies to ExpVid and --language to SFE only")
        names = [spec.name for spec in TASKS]
        bad = [t for t in tasks or () if t not in names]
        if bad:
            raise DataError(f"unknown SciVideoBench task(s) {bad}; tasks are: {', '.join(names)}")
        return Selection(tuple(t for t in names if not tasks or t in tasks))

    def annotations(self, listing: dict[str, int], selection: Selection) -> tuple[list[str], list[str]]:
        for name in RELEASE_FILES:
            if name in listing:
                return [name], []
        root_json = [p for p in listing if "/" not in p and p.endswith((".json", ".jsonl"))]
        if len(root_json) == 1:
            return root_json, []
        return [], [f"no question file at the repository root (looked for {', '.join(RELEASE_FILES)})"]

    def prepare(self, root: Path, downloaded: list[str]) -> list[str]:
        for path in downloaded:
            if path not in RELEASE_FILES:  # give an unexpectedly named file the name the loader reads
                target = root / ("scivideobench.json" if path.endswith(".json") else "scivideobench.jsonl")
                link_file(root / path, target)
        return []

    def load(self, root: Path, selection: Selection, check_media: bool) -> Dataset:
        return self._load(root, tasks=selection.tasks, check_media=check_media)

    def media(self, dataset: Dataset, root: Path, listing: dict[str, int]) -> tuple[set[str], list[str]]:
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
        problems = []
        for path in sorted(downloaded):
            if path.endswith(ARCHIVES):
                problems += unpack_archive(root / path, root)
            elif (posixpath.dirname(path) or ".") not in VIDEO_DIRS:
                link_file(root / path, root / VIDEO_DIRS[0] / posixpath.basename(path))
        # Archives often hold a top folder: link any jove_* found below the root into videos/.
        for found in root.rglob("jove_*"):
            folder = found.parent.relative_to(root).as_posix()
            if found.is_file() and folder not in (*VIDEO_DIRS, ".") and ".cache" not in found.parts:
                link_file(found, root / VIDEO_DIRS[0] / found.name)
        return problems
