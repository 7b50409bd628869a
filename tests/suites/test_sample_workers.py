"""Video jobs run in worker processes, also from a host process that has other threads running."""

from __future__ import annotations

import threading
from pathlib import Path

import av
import pytest

from expvid.media.synth import read_frame_code
from expvid.suites.sample.plan import ClipSpec
from expvid.suites.sample.scripts import load_scripts
from expvid.suites.sample.timeline import plan_timeline
from expvid.suites.sample.videos import VideoJob, run_video_jobs


def _short_job(source: str, clips: tuple[ClipSpec, ...] = ()) -> VideoJob:
    script = next(s for s in load_scripts() if s.reject_reason == "video too short")
    return VideoJob(script, plan_timeline(script, 0), source, clips)


def _first_and_last_codes(path: Path) -> tuple[int, int, int]:
    with av.open(str(path)) as container:
        frames = [frame.to_ndarray(format="rgb24") for frame in container.decode(video=0)]
    return len(frames), read_frame_code(frames[0]), read_frame_code(frames[-1])


def test_jobs_run_in_spawned_workers_while_a_thread_is_running(tmp_path: Path) -> None:
    stop = threading.Event()
    bystander = threading.Thread(target=stop.wait, daemon=True)  # forces the spawn start method
    bystander.start()
    try:
        clip = ClipSpec("clips/tail.mp4", "67001", "level_1", ((100, 130),), (3,))
        run_video_jobs(tmp_path, [_short_job("a/video.mp4", (clip,)), _short_job("b/video.mp4")], workers=2)
    finally:
        stop.set()
        bystander.join()
    n_frames = _short_job("x").timeline.n_frames
    for source in ("a/video.mp4", "b/video.mp4"):
        assert _first_and_last_codes(tmp_path / source) == (n_frames, 0, n_frames - 1)
    assert _first_and_last_codes(tmp_path / "clips/tail.mp4") == (30, 100, 129)


def test_a_failing_job_raises_in_the_caller(tmp_path: Path) -> None:
    not_a_prefix = ClipSpec("videos/level_3/67001_.mp4", "67001", "level_3", ((10, 50),), (1,))
    with pytest.raises(ValueError, match="a Level-3 video must be one prefix of the source"):
        run_video_jobs(
            tmp_path, [_short_job("a/video.mp4", (not_a_prefix,)), _short_job("b/video.mp4")], workers=2
        )
