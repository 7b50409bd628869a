"""Shared state of one build run: settings, model clients, the ledger, the state directory, progress,
and clip cutting.

Experiments are loaded once (transcript parsed, video probed) and handed to every stage. Stages only
say which clips they need (`ClipSpec`); once an experiment's stages are done, `cut_experiment` cuts
all of its missing clips from ONE ordered decode pass of its source video (`expvid.media.clip_pass`),
in a pool of `jobs` worker processes (one video per process), while model calls for the other
experiments go on in this process's event loop.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from expvid.construction.accounting import Ledger
from expvid.construction.config import BuildConfig
from expvid.construction.digests import DigestCache
from expvid.construction.drafts import ClipSpec, Problem
from expvid.construction.llm import LLMClient
from expvid.construction.progress import NO_PROGRESS, PhaseClock, ProgressSink
from expvid.construction.sources import SourceExperiment
from expvid.construction.speech.stage import SpeechStage
from expvid.construction.state import BuildState
from expvid.construction.timeline import Boundaries
from expvid.media.clip_pass import ClipJob, cut_clips
from expvid.media.errors import MediaError
from expvid.media.info import VideoInfo
from expvid.media.transcript_model import Transcript


@dataclass
class LoadedExperiment:
    """An experiment with its transcript read and its video probed (or the reasons they could not be)."""

    source: SourceExperiment
    transcript: Transcript | None = None
    info: VideoInfo | None = None
    problems: list[str] = field(default_factory=list)
    #: Where the transcript came from: a file of the folder, or speech-to-text (engine, model,
    #: language; `expvid.construction.speech.sources`). Written to the sidecars, shown to reviewers.
    transcript_provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def transcribed(self) -> bool:
        """The transcript was made by speech-to-text for this build."""
        return self.transcript_provenance.get("engine") not in (None, "file")

    @property
    def video_id(self) -> str:
        return self.source.video_id

    @property
    def duration(self) -> float | None:
        """The probed duration, else `duration` from meta.json (curation without the video on disk)."""
        return self.source.meta_duration if self.info is None else self.info.duration

    @property
    def video_end(self) -> float:
        assert self.info is not None
        return self.info.end

    #: sha256 of the source files' bytes ("video", "transcript", "paper"; `digests.py`), computed when the
    #: experiment is loaded for a build: clip names and stage fingerprints never depend on file times.
    digests: dict[str, str] = field(default_factory=dict)

    def load_digests(self, cache: DigestCache, *, video: bool = True) -> None:
        """Fill `digests` (reads each file once per size/mtime/inode, see `digests.py`). Curation needs
        only the text files; the video is hashed once the experiment is kept."""
        source = self.source
        files = [("transcript", source.transcript), ("paper", source.paper)]
        if video:
            files.append(("video", source.video))
        for name, path in files:
            if name not in self.digests and path is not None and path.exists():
                self.digests[name] = cache.digest(path)

    @property
    def text_stamp(self) -> str:
        """Identity of the transcript and paper (their content), for curation's fingerprint."""
        return "|".join(
            f"{name}:{self.digests[name]}" for name in ("transcript", "paper") if name in self.digests
        )

    @property
    def stamp(self) -> str:
        """Identity of the source files (their content) for stage fingerprints."""
        if self.source.video is not None:
            assert "video" in self.digests, "load_digests() first"
        return "|".join(f"{name}:{digest}" for name, digest in sorted(self.digests.items()))

    @property
    def video_stamp(self) -> str:
        """Identity of the source video (its content) for clip names."""
        if self.source.video is None:
            return ""
        assert "video" in self.digests, "load_digests() first"
        return self.digests["video"]

    @property
    def source_video_path(self) -> str:
        """Where the candidate directory keeps a copy of the source video (provenance `source.video`)."""
        suffix = self.source.video.suffix.lower() if self.source.video else ".mp4"
        return f"sources/{self.video_id}/video{suffix}"

    def boundaries(self, tolerance: float) -> Boundaries:
        assert self.transcript is not None
        return Boundaries(self.transcript.cues, tolerance=tolerance)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def default_jobs() -> int:
    """Cutting processes when `--jobs` is not given, from benchmarks/build_clips.py: on 2 cores one
    process (its decoder on both cores, one encoder thread per clip) beat two worker processes (whole
    build 0.69x, clip phase 0.94x: two workers' start-up and a shared decoder cost more than they
    gain). With more cores, one worker per two cores: each video's encode is single-threaded, so
    separate videos in separate processes is where the cores go (measure with the benchmark)."""
    cores = usable_cores()
    return 1 if cores <= 2 else cores // 2


def default_clip_threads(jobs: int) -> int:
    """Encoder threads per clip when not given: one. Clips are short and several are encoded at once
    from one decode pass; FFmpeg's automatic count was slower in every set-up measured."""
    del jobs
    return 1


@dataclass
class CutStats:
    """Clip cutting of this run: per video, the seconds spent in the worker and the frames decoded."""

    jobs: int = 1
    threads: int = 1  # encoder threads per clip (0: FFmpeg's automatic count)
    videos: int = 0
    clips_cut: int = 0
    clips_reused: int = 0
    worker_seconds: float = 0.0
    decoded_frames: int = 0
    video_frames: int = 0
    per_video: dict[str, dict[str, Any]] = field(default_factory=dict)


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the build process is gone.

    A build killed with SIGKILL cannot shut its pool down, and a worker blocked on the pool's queue
    would wait forever (and with it the multiprocessing resource tracker, which lives until every
    holder of its pipe is gone). A daemon thread notices the parent's death (this process is
    re-parented) within half a second and ends the worker at once."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _warm() -> int:
    """Run once in each worker at start-up: the imports happen while the model calls go on."""
    import av  # noqa: F401

    return os.getpid()


def cut_video(
    source: str, jobs: list[ClipJob], preset: str, crf: int, threads: int = 1, decode_threads: int = 0
) -> dict[str, Any]:
    """Worker-process entry point: every clip of one video from one decode pass (picklable, top level)."""
    started = time.perf_counter()
    try:
        results, stats = cut_clips(
            source, jobs, preset=preset, crf=crf, threads=threads, decode_threads=decode_threads
        )
    except MediaError as error:  # returned, not raised: media errors do not survive pickling
        return {"error": str(error)}
    return {
        "seconds": time.perf_counter() - started,
        "decoded_frames": stats.decoded_frames,
        "seeks": stats.seeks,
        "clips": len(results),
    }


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
        progress: ProgressSink = NO_PROGRESS,
        speech: SpeechStage | None = None,
    ) -> None:
        self.config = config
        #: Speech-to-text for experiments without a transcript, and what failed there (failed units).
        self.speech = speech
        self.speech_problems: list[Problem] = []
        self.llm = llm
        self.vlm = vlm
        self.blind = blind
        self.ledger = ledger
        self.state = state
        self.out = config.out
        self.progress = progress
        self.clock = PhaseClock()
        self.calls = asyncio.Semaphore(config.concurrency)
        jobs = config.jobs or default_jobs()
        threads = config.clip_threads if config.clip_threads is not None else default_clip_threads(jobs)
        self.cut_stats = CutStats(jobs=jobs, threads=threads)
        self._executor: Executor | None = None

    @property
    def decode_threads(self) -> int:
        """Decoder threads per cutting process: all cores for one, an equal share for several."""
        jobs = self.cut_stats.jobs
        return 0 if jobs == 1 else max(1, usable_cores() // jobs)

    @property
    def clips_cut(self) -> int:
        return self.cut_stats.clips_cut

    @property
    def clips_reused(self) -> int:
        return self.cut_stats.clips_reused

    def start_pool(self, videos: int) -> None:
        """Start the workers now (at most one per video to cut), so that their start-up overlaps the
        model calls instead of delaying the first cut."""
        self.cut_stats.jobs = max(1, min(self.cut_stats.jobs, videos))
        pool = self._pool()
        if isinstance(pool, ProcessPoolExecutor):
            for _ in range(self.cut_stats.jobs):
                pool.submit(_warm)

    def _pool(self) -> Executor:
        if self._executor is None:
            jobs = self.cut_stats.jobs
            # One process per video; spawn, not fork: this process has threads and open connections.
            self._executor = (
                ThreadPoolExecutor(max_workers=1)
                if jobs == 1
                else ProcessPoolExecutor(
                    max_workers=jobs,
                    mp_context=get_context("spawn"),
                    initializer=_exit_with_parent,
                    initargs=(os.getpid(),),
                )
            )
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _marker(self, spec: ClipSpec) -> Path | None:
        # Level-3 files have a fixed name, so whether the file matches the spec is kept in a marker.
        return self.state.root / "clips" / f"{spec.video_id}.level3" if spec.level == 3 else None

    def _present(self, spec: ClipSpec) -> bool:
        marker = self._marker(spec)
        return (self.out / spec.path).is_file() and (marker is None or _read(marker) == spec.key)

    async def cut_experiment(self, experiment: LoadedExperiment, specs: set[ClipSpec]) -> str | None:
        """Make sure every clip of `specs` exists under the candidate directory.

        Missing clips are cut together from one decode pass of the source (in a worker process);
        whole-video Level-3 files are hard-linked. Returns None, or what went wrong (the clips that
        exist are kept; the missing ones are cut again by the next run).
        """
        source = experiment.source.video
        assert source is not None
        missing = sorted((s for s in specs if not self._present(s)), key=lambda s: (s.start, s.end, s.path))
        self.cut_stats.clips_reused += len(specs) - len(missing)
        whole = [s for s in missing if s.whole]
        cut = [s for s in missing if not s.whole]
        for spec in whole:
            await asyncio.to_thread(link_or_copy, source, self.out / spec.path)
            self._mark(spec)
        self.cut_stats.clips_cut += len(whole)
        if not cut:
            return None
        self.progress.add("clips", len(cut))
        jobs = [ClipJob(str(self.out / s.path), s.start, s.end, tuple(s.remove)) for s in cut]
        with self.clock.running("clips"):
            loop = asyncio.get_running_loop()
            try:
                done = await loop.run_in_executor(
                    self._pool(),
                    cut_video,
                    str(source),
                    jobs,
                    self.config.preset,
                    self.config.crf,
                    self.cut_stats.threads,
                )
            finally:
                self.progress.advance("clips", len(cut))
        if "error" in done:
            return f"media: {done['error']}"
        for spec in cut:
            self._mark(spec)
        stats = self.cut_stats
        stats.videos += 1
        stats.clips_cut += done["clips"]
        stats.worker_seconds += done["seconds"]
        stats.decoded_frames += done["decoded_frames"]
        frames = experiment.info.num_frames if experiment.info is not None else 0
        stats.video_frames += frames
        stats.per_video[experiment.video_id] = {
            "clips": done["clips"],
            "seconds": round(done["seconds"], 3),
            "decoded_frames": done["decoded_frames"],
            "video_frames": frames,
            "decode_passes": round(done["decoded_frames"] / frames, 3) if frames else None,
        }
        return None

    def _mark(self, spec: ClipSpec) -> None:
        marker = self._marker(spec)
        if marker is not None:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(spec.key, encoding="utf-8")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def link_or_copy(source: Path, target: Path) -> None:
    """Hard-link `source` to `target` (same file system, no extra space), else copy it; atomic. A
    symlinked source is linked as the file it points to (Linux `link` would copy the symlink itself,
    relative target and all, into the output)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        os.link(os.path.realpath(source), partial)
    except OSError:
        shutil.copyfile(source, partial)
    os.replace(partial, target)
