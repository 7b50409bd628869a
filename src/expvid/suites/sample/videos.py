"""Render and encode every video of the sample: source videos, clips, Level-3 videos.

One job per experiment (its frame function is built once per job); jobs run in worker processes
so both cores encode. Clips are cut by RENDERING their source frame ranges, which is exact by
construction. The Level-3 video is the source video without its concluding slide: the source is
encoded without B-frames, so every packet prefix decodes on its own and the trim is a stream copy
of the packets before the slide (no second encode).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from multiprocessing.context import BaseContext
from pathlib import Path

import av

from expvid.media.synth import write_video
from expvid.suites.sample.layout import PRESET, SOURCE_GOP
from expvid.suites.sample.plan import ClipSpec
from expvid.suites.sample.render import FrameRenderer
from expvid.suites.sample.scripts import ExperimentScript
from expvid.suites.sample.timeline import Timeline

#: Clip kinds encoded with B-frames, so the release also exercises decoders on reordered streams
#: (the rest go without: B-frames cost ~60% more encode time at this size).
B_FRAME_KINDS = frozenset({"verification", "prediction"})


@dataclass(frozen=True)
class VideoJob:
    """Everything one worker needs for one experiment (plain data, so it pickles)."""

    script: ExperimentScript
    timeline: Timeline
    source_path: str
    clips: tuple[ClipSpec, ...]

    @property
    def cost(self) -> int:
        """Frames to encode, for scheduling the biggest jobs first."""
        return self.timeline.n_frames + sum(clip.n_frames for clip in self.clips if clip.kind != "level_3")


def run_video_jobs(root: Path, jobs: list[VideoJob], workers: int | None = None) -> None:
    """Run all jobs, in parallel when `workers` > 1 (default: one worker per core)."""
    workers = (os.cpu_count() or 1) if workers is None else workers
    ordered = sorted(jobs, key=lambda job: job.cost, reverse=True)
    if workers <= 1 or len(ordered) <= 1:
        for job in ordered:
            render_job(root, job)
        return
    with ProcessPoolExecutor(max_workers=workers, mp_context=_process_context()) as pool:
        futures = [pool.submit(render_job, root, job) for job in ordered]
        for future in futures:
            future.result()  # a worker's exception is re-raised here, in the caller


def _process_context() -> BaseContext:
    """`fork` starts workers fastest, but forking a process in which other threads run (a test
    server, a progress thread) can deadlock the child on a lock held at fork time; spawn then."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def render_job(root: Path, job: VideoJob) -> None:
    """Encode one experiment: its source video, then each clip (rendered) or Level-3 trim (copied)."""
    renderer = FrameRenderer(job.script, job.timeline)
    fps = job.timeline.fps
    source = root / job.source_path
    # One encoder thread: the parallelism is across jobs, one per core.
    write_video(
        source,
        renderer.frames([(0, job.timeline.n_frames)]),
        fps=fps,
        gop=SOURCE_GOP,
        bframes=0,
        preset=PRESET,
        threads=1,
    )
    for clip in job.clips:
        target = root / clip.path
        if clip.kind == "level_3":
            (start, end), *rest = clip.ranges
            if start != 0 or rest:
                raise ValueError(f"{clip.path}: a Level-3 video must be one prefix of the source")
            copy_prefix(source, target, end_frame=end, fps=fps)
        else:
            bframes = 2 if clip.kind in B_FRAME_KINDS else 0
            write_video(
                target, renderer.frames(clip.ranges), fps=fps, bframes=bframes, preset=PRESET, threads=1
            )


def copy_prefix(source: Path, target: Path, *, end_frame: int, fps: int) -> None:
    """Stream-copy the frames before `end_frame` of a B-frame-free video into `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(source)) as reader, av.open(str(target), "w") as writer:
        in_stream = reader.streams.video[0]
        out_stream = writer.add_stream_from_template(in_stream)
        time_base = in_stream.time_base
        if time_base is None:
            raise ValueError(f"{source}: video stream has no time base")
        for packet in reader.demux(in_stream):
            if packet.pts is None:  # the demuxer's final flush packet
                continue
            if round(Fraction(packet.pts) * time_base * fps) >= end_frame:
                continue
            packet.stream = out_stream
            writer.mux(packet)
