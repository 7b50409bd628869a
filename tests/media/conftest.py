"""Generated test videos (tiny, session-scoped) and a reference decoder for frame exactness.

Every frame carries its frame number (expvid.media.synth), so a test can read which frame it got.
The reference decoder decodes every frame with PyAV and answers "which frame is on screen at t" as
the last frame with pts <= t: the definition the sampler must match exactly.

Helpers are handed out as fixtures (not imported from here) because several test areas have a
conftest.py and none of them is a package.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest
from ffmpeg_cli import REQUIRE_ENV, ffmpeg_command, ffmpeg_frames, make_cli_videos

from expvid.media.index import clear_index_memo
from expvid.media.synth import read_frame_code, scene_frame, write_video

WIDTH, HEIGHT = 160, 96


@dataclass(frozen=True)
class RefFrame:
    index: int
    time: float
    pts: int
    code: int
    rgb: np.ndarray


@dataclass(frozen=True)
class Reference:
    """Every frame of a video as a plain full decode shows it."""

    frames: list[RefFrame]

    def at(self, t: float) -> RefFrame:
        """The frame on screen at t: the last one with pts <= t (the first one before it starts)."""
        shown = self.frames[0]
        for frame in self.frames:
            if frame.time <= t + 1e-9:
                shown = frame
            else:
                break
        return shown

    @property
    def end(self) -> float:
        return self.frames[-1].time + (self.frames[-1].time - self.frames[-2].time)


def _reference(path: Path) -> Reference:
    frames = []
    with av.open(str(path)) as container:
        for i, frame in enumerate(container.decode(video=0)):
            rgb = np.rot90(frame.to_ndarray(format="rgb24"), k=(frame.rotation or 0) // 90)
            frames.append(RefFrame(i, float(frame.time), int(frame.pts), read_frame_code(rgb), rgb))
    return Reference(frames)


def _frames(count: int, width: int = WIDTH, height: int = HEIGHT) -> list[np.ndarray]:
    return [scene_frame(i, width, height) for i in range(count)]


def _write_custom(path: Path, count: int, *, codec: str, options: dict[str, str], fps: int = 30) -> None:
    """A writer for encoder settings `write_video` does not offer (open GOP, VP9)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=fps)
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = options
        for i, image in enumerate(_frames(count)):
            frame = av.VideoFrame.from_ndarray(image, format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, fps)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def _remux(source: Path, target: Path, options: dict[str, str]) -> None:
    with av.open(str(source)) as src, av.open(str(target), "w", options=options) as dst:
        stream = src.streams.video[0]
        out = dst.add_stream_from_template(stream)
        for packet in src.demux(stream):
            if packet.dts is None and packet.size == 0:
                continue
            packet.stream = out
            dst.mux(packet)


@pytest.fixture(scope="session")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Named test videos, 160x96, a few hundred frames at most, written once per session."""
    root = tmp_path_factory.mktemp("videos")
    made: dict[str, Path] = {}
    frames300 = _frames(300)

    def add(name: str, **kwargs: object) -> None:
        path = root / name
        write_video(path, kwargs.pop("frames", frames300), **kwargs)  # type: ignore[arg-type]
        made[name] = path

    add("cfr.mp4", fps=30.0, gop=30, bframes=2)  # 10 s, 10 GOPs, B-frames
    add("nob.mp4", fps=25.0, gop=50, bframes=0, frames=frames300[:150])  # P-frames only
    add("cfr.mkv", fps=30.0, gop=30, bframes=2)
    # Variable frame rate: 5 s at 10 fps, then 5 s at 30 fps.
    times = [i / 10 for i in range(50)] + [5 + i / 30 for i in range(150)]
    add("vfr.mp4", times=times, gop=40, bframes=2, frames=frames300[:200])
    for degrees in (90, 180, 270):
        add(f"rot{degrees}.mp4", fps=30.0, gop=20, bframes=2, rotation=degrees, frames=frames300[:90])
    add("long_gop.mp4", fps=30.0, gop=60, bframes=3)  # 5 GOPs of 2 s
    add("single_gop.mp4", fps=30.0, gop=1000, bframes=2, frames=frames300[:120])

    open_gop = root / "open_gop.mkv"
    _write_custom(
        open_gop,
        240,
        codec="libx264",
        options={
            "preset": "veryfast",
            "bf": "3",
            "x264-params": "open-gop=1:keyint=48:min-keyint=48:scenecut=0",
        },
    )
    made["open_gop.mkv"] = open_gop
    webm = root / "vp9.webm"
    _write_custom(webm, 90, codec="libvpx-vp9", options={"g": "30", "deadline": "realtime", "cpu-used": "8"})
    made["vp9.webm"] = webm
    faststart = root / "faststart.mp4"
    _remux(made["cfr.mp4"], faststart, {"movflags": "faststart"})
    made["faststart.mp4"] = faststart
    return made


@pytest.fixture(scope="session")
def reference() -> Callable[[Path], Reference]:
    """Reference decode of a video (memoised per path)."""
    memo: dict[Path, Reference] = {}

    def get(path: Path) -> Reference:
        if path not in memo:
            memo[path] = _reference(path)
        return memo[path]

    return get


@pytest.fixture(scope="session")
def cli_videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Files cut, remuxed, re-encoded and rotated by the ffmpeg command (see ffmpeg_cli.py)."""
    if ffmpeg_command() is None:
        reason = "the ffmpeg command is not installed"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason} and {REQUIRE_ENV}=1")
        pytest.skip(f"{reason}; set {REQUIRE_ENV}=1 to fail instead")
    return make_cli_videos(tmp_path_factory.mktemp("ffmpeg_made"))


@pytest.fixture(scope="session")
def ffmpeg_reference() -> Callable[[Path], Reference]:
    """Every frame as the ffmpeg command presents it (memoised per path): the independent reference."""
    memo: dict[Path, Reference] = {}

    def get(path: Path) -> Reference:
        if path not in memo:
            memo[path] = Reference(
                [RefFrame(f.index, f.time, f.pts, f.code, f.rgb) for f in ffmpeg_frames(path)]
            )
        return memo[path]

    return get


@pytest.fixture(scope="session")
def frame_code() -> Callable[[np.ndarray], int]:
    return read_frame_code


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Never touch the user's ~/.cache/expvid: every test gets its own default cache directory."""
    monkeypatch.setenv("EXPVID_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    clear_index_memo()


@pytest.fixture
def open_fds() -> Callable[[], int]:
    """Number of open file descriptors of this process (Linux /proc); skips elsewhere."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd")
    return lambda: len(os.listdir("/proc/self/fd"))
