"""Shared state of one build run: settings, model clients, the ledger, the state directory, and clip cutting.

Experiments are loaded once (transcript parsed, video probed) and handed to every stage. Clip cutting
is CPU-bound, so it runs in worker threads (PyAV releases the GIL while coding), at most one per core,
and each clip is cut once even when several items share it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from expvid.build.accounting import Ledger
from expvid.build.config import BuildConfig
from expvid.build.drafts import ClipSpec
from expvid.build.llm import LLMClient
from expvid.build.sources import SourceExperiment
from expvid.build.state import BuildState
from expvid.build.timeline import Boundaries
from expvid.media.clips import cut_clip
from expvid.media.info import VideoInfo
from expvid.media.transcript_model import Transcript


@dataclass
class LoadedExperiment:
    """An experiment with its transcript read and its video probed (or the reasons they could not be)."""

    source: SourceExperiment
    transcript: Transcript | None = None
    info: VideoInfo | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def video_id(self) -> str:
        return self.source.video_id

    @property
    def duration(self) -> float | None:
        return None if self.info is None else self.info.duration

    @property
    def video_end(self) -> float:
        assert self.info is not None
        return self.info.end

    @property
    def stamp(self) -> str:
        """Identity of the source files (size and modification time) for fingerprints and clip names."""
        parts = []
        for path in (self.source.video, self.source.transcript, self.source.paper):
            if path is not None and path.exists():
                stat = path.stat()
                parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
        return "|".join(parts)

    @property
    def video_stamp(self) -> str:
        video = self.source.video
        if video is None:
            return ""
        stat = video.stat()
        return f"{stat.st_size}:{stat.st_mtime_ns}"

    @property
    def source_video_path(self) -> str:
        """Where the candidate directory keeps a copy of the source video (provenance `source.video`)."""
        suffix = self.source.video.suffix.lower() if self.source.video else ".mp4"
        return f"sources/{self.video_id}/video{suffix}"

    def boundaries(self, tolerance: float) -> Boundaries:
        assert self.transcript is not None
        return Boundaries(self.transcript.cues, tolerance=tolerance)


class BuildContext:
    def __init__(
        self,
        config: BuildConfig,
        *,
        llm: LLMClient,
        vlm: LLMClient | None,
        blind: LLMClient | None,
        ledger: Ledger,
        state: BuildState,
    ) -> None:
        self.config = config
        self.llm = llm
        self.vlm = vlm
        self.blind = blind
        self.ledger = ledger
        self.state = state
        self.out = config.out
        self.calls = asyncio.Semaphore(config.concurrency)
        self._clip_slots = asyncio.Semaphore(max(1, os.cpu_count() or 1))
        self._clip_locks: dict[str, asyncio.Lock] = {}
        self.clips_cut = 0
        self.clips_reused = 0

    async def cut(self, experiment: LoadedExperiment, spec: ClipSpec) -> Path:
        """Make sure the clip exists under the candidate directory; returns its path."""
        target = self.out / spec.path
        lock = self._clip_locks.setdefault(spec.path, asyncio.Lock())
        # Level-3 files have a fixed name, so whether the file matches the spec is kept in a marker.
        marker = self.state.root / "clips" / f"{spec.video_id}.level3" if spec.level == 3 else None
        async with lock:
            if target.is_file() and (marker is None or _read(marker) == spec.key):
                self.clips_reused += 1
                return target
            source = experiment.source.video
            assert source is not None
            async with self._clip_slots:
                if spec.whole:
                    await asyncio.to_thread(link_or_copy, source, target)
                else:
                    await asyncio.to_thread(
                        cut_clip,
                        source,
                        target,
                        start=spec.start,
                        end=spec.end,
                        remove=spec.remove,
                        preset=self.config.preset,
                        crf=self.config.crf,
                        threads=1,
                    )
            if marker is not None:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text(spec.key, encoding="utf-8")
            self.clips_cut += 1
        return target


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def link_or_copy(source: Path, target: Path) -> None:
    """Hard-link `source` to `target` (same file system, no extra space), else copy it; atomic."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        os.link(source, partial)
    except OSError:
        shutil.copyfile(source, partial)
    os.replace(partial, target)
