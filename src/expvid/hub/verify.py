"""Is a downloaded benchmark complete? Every selected item loads and every media file it uses opens.

Why more than "the file exists": an interrupted copy leaves a file of the right name that ends
early, and a mirror can serve an HTML error page under a video's name. Each referenced video is
indexed by demuxing it (`expvid.media.index.build_index`, the same check the frame sampler relies
on: truncation against the container's announced length, no frames, not a video), each image is
decoded by Pillow, and each size is compared with the size the Hub lists. Results for files whose
(size, mtime) did not change are remembered in `<root>/.cache/expvid/verified.json`, so re-running
a fetch after an interruption does not demux 40 GB again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from expvid.schema import ImagesRef, VideoRef
from expvid.schema.dataset import Dataset

_MEMO = Path(".cache") / "expvid" / "verified.json"


@dataclass
class MediaCheck:
    present: int = 0
    readable: int = 0
    #: File -> what is wrong with it ("missing", a size mismatch, why it does not open).
    failures: dict[Path, str] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        return list(self.failures.values())

    def damaged(self) -> list[Path]:
        """Files that are there but wrong (worth downloading again), as opposed to missing ones."""
        return [path for path, problem in self.failures.items() if not problem.endswith(": missing")]


def media_files(dataset: Dataset) -> tuple[list[Path], list[Path]]:
    """(videos, images) referenced by the dataset's items, each once, in first-use order."""
    videos: dict[str, None] = {}
    images: dict[str, None] = {}
    for item in dataset.items:
        if isinstance(item.media, VideoRef):
            videos[item.media.path] = None
        elif isinstance(item.media, ImagesRef):
            for path in item.media.paths:
                images[path] = None
    return [Path(p) for p in videos], [Path(p) for p in images]


def check_media(
    root: Path,
    videos: list[Path],
    images: list[Path],
    *,
    expected_sizes: dict[Path, int] | None = None,
    probe: bool = True,
    workers: int = 4,
    on_checked: Callable[[], None] | None = None,
) -> MediaCheck:
    """Check each file: present, the listed size, and (with `probe`) readable as a video or an image."""
    memo_path = root / _MEMO
    memo = _read_memo(memo_path)
    result = MediaCheck()
    sizes = expected_sizes or {}

    def one(path: Path, kind: str) -> str | None:
        try:
            stat = path.stat()
        except OSError:
            return f"{path}: missing"
        expected = sizes.get(path)
        if expected is not None and stat.st_size != expected:
            return f"{path}: {stat.st_size} bytes on disk, the source lists {expected} (incomplete download?)"
        if not probe:
            return None
        key = str(path)
        stamp = [stat.st_size, stat.st_mtime_ns]
        if memo.get(key) == stamp:
            return None
        problem = _probe_video(path) if kind == "video" else _probe_image(path)
        if problem is None:
            memo[key] = stamp
        return problem

    jobs = [(p, "video") for p in videos] + [(p, "image") for p in images]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for (path, _kind), problem in zip(jobs, pool.map(lambda job: one(*job), jobs), strict=True):
            if on_checked is not None:
                on_checked()
            if problem is None:
                result.present += 1
                result.readable += 1
                continue
            if not problem.endswith(": missing"):
                result.present += 1
            result.failures[path] = problem
    if probe:
        _write_memo(memo_path, memo)
    return result


def _probe_video(path: Path) -> str | None:
    from expvid.media.errors import MediaError
    from expvid.media.index import build_index

    try:
        build_index(path)
    except MediaError as error:
        return str(error)
    return None


def _probe_image(path: Path) -> str | None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.load()
    except (OSError, UnidentifiedImageError, ValueError) as error:
        return f"{path}: not a readable image ({error})"
    return None


def _read_memo(path: Path) -> dict[str, list[int]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_memo(path: Path, memo: dict[str, list[int]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(memo, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
