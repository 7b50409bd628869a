"""Videos as people actually have them, made with the real `ffmpeg` command, and ffmpeg's own decode.

Why the command-line tool and not PyAV: the files researchers feed an evaluation were cut, remuxed
and re-encoded with `ffmpeg`, whose muxers write what PyAV's encoding path never does (edit lists
that hide a GOP of pre-roll after `-ss ... -c copy`, the tail a `-t` cut leaves, Matroska's 1 ms
time base, a rotation tag added to an existing file). And the reference for "which frame is shown
at t" is what `ffmpeg` itself presents (`-copyts -fps_mode passthrough`, rotation applied): an
independent FFmpeg build, not the library the sampler uses.

Imported by this directory's conftest.py (pytest puts the directory on sys.path).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from expvid.media.synth import FrameCodeError, read_frame_code, scene_frame, write_video

WIDTH, HEIGHT = 160, 96

#: Set to 1 (CI does) to fail instead of skipping when the ffmpeg command is missing.
REQUIRE_ENV = "EXPVID_REQUIRE_FFMPEG"


def ffmpeg_command() -> str | None:
    """Path of the `ffmpeg` command, or None."""
    return shutil.which("ffmpeg")


class FfmpegFailed(RuntimeError):
    """An ffmpeg invocation failed; the message holds the command and its stderr."""


def run_ffmpeg(*args: str | os.PathLike[str], log_level: str = "error") -> subprocess.CompletedProcess[bytes]:
    """Run `ffmpeg` with `args`, never reading stdin; raise `FfmpegFailed` with its stderr on failure."""
    binary = ffmpeg_command()
    if binary is None:
        raise FfmpegFailed("the ffmpeg command is not installed")
    command = [binary, "-hide_banner", "-nostdin", "-y", "-loglevel", log_level, *map(str, args)]
    done = subprocess.run(command, capture_output=True, check=False)
    if done.returncode != 0:
        raise FfmpegFailed(f"{' '.join(command)}\n{done.stderr.decode(errors='replace')[-3000:]}")
    return done


@dataclass(frozen=True)
class CliFrame:
    """One frame as `ffmpeg` presents it: output position, pts, time, drawn frame number, pixels."""

    index: int
    pts: int
    time: float
    code: int
    rgb: np.ndarray


_SHOWINFO = re.compile(r"n:\s*(\d+)\s+pts:\s*(-?\d+)\s+pts_time:\S+.*?\ss:(\d+)x(\d+)\s")


def ffmpeg_frames(path: Path) -> list[CliFrame]:
    """Every frame `ffmpeg` shows for the first video stream, in presentation order.

    `-copyts` keeps the file's own timestamps (ffmpeg otherwise shifts them to start at 0),
    `-fps_mode passthrough` neither drops nor duplicates frames, rotation is applied (ffmpeg's
    default), and `showinfo` reports each frame's pts in the stream's time base.
    """
    time_base = _stream_time_base(path)
    done = run_ffmpeg(
        "-copyts", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-vf", "showinfo",
        "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1",
        log_level="info",
    )  # fmt: skip
    infos = _SHOWINFO.findall(done.stderr.decode(errors="replace"))
    frames: list[CliFrame] = []
    offset = 0
    raw = done.stdout
    for position, (number, pts, width, height) in enumerate(infos):
        assert int(number) == position, f"{path}: showinfo lines out of order"
        size = int(width) * int(height) * 3
        rgb = np.frombuffer(raw, dtype=np.uint8, count=size, offset=offset).reshape(
            int(height), int(width), 3
        )
        offset += size
        try:
            code = read_frame_code(rgb)
        except FrameCodeError as error:
            raise AssertionError(
                f"{path}: ffmpeg's frame {position} carries no frame number ({error})"
            ) from None
        frames.append(CliFrame(position, int(pts), float(int(pts) * time_base), code, rgb))
    assert offset == len(raw), f"{path}: {len(raw) - offset} bytes of ffmpeg output not matched to a frame"
    assert frames, f"{path}: ffmpeg shows no frame"
    return frames


def _stream_time_base(path: Path) -> Fraction:
    with av.open(str(path)) as container:
        time_base = container.streams.video[0].time_base
    assert time_base is not None
    return time_base


# -- the files ---------------------------------------------------------------------------------


def _synth(path: Path, count: int, **options: object) -> Path:
    write_video(path, (scene_frame(i, WIDTH, HEIGHT) for i in range(count)), **options)  # type: ignore[arg-type]
    return path


def _x264(*params: str) -> list[str]:
    return ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", *params]


def _rotate_by_cli(source: Path, target: Path, degrees: int) -> None:
    """Add a display rotation to an existing file without re-encoding, as ffmpeg users do.

    FFmpeg 6+ has `-display_rotation` (input option, degrees counter-clockwise); older releases
    take the legacy `rotate` tag on output. Whichever this ffmpeg has is used, and the result
    checked, so the test never runs on a file that is not what it claims.
    """
    try:
        run_ffmpeg("-display_rotation:v:0", str(degrees), "-i", source, "-c", "copy", target)
    except FfmpegFailed:
        run_ffmpeg("-i", source, "-c", "copy", "-metadata:s:v:0", f"rotate={degrees}", target)
    with av.open(str(target)) as container:
        rotation = next(container.decode(video=0)).rotation
    assert rotation % 360 == degrees % 360, f"{target}: ffmpeg wrote rotation {rotation}, not {degrees}"


def make_cli_videos(root: Path) -> dict[str, Path]:
    """Write the files; names say what each one is. Sources are coded synthetic videos (160x96)."""
    root.mkdir(parents=True, exist_ok=True)
    src = _synth(root / "source_gop90.mp4", 450, fps=30.0, gop=90, bframes=2)  # 15 s, keyframe every 3 s
    rotated_src = _synth(root / "source_rot90.mp4", 150, fps=30.0, gop=45, bframes=2, rotation=90)
    upright = [np.ascontiguousarray(np.rot90(scene_frame(i, WIDTH, HEIGHT), k=-1)) for i in range(90)]
    stored_sideways = root / "source_sideways.mp4"  # pixels stored as a phone held sideways, no tag
    write_video(stored_sideways, upright, fps=30.0, gop=30, bframes=2)
    made: dict[str, Path] = {}

    def out(name: str) -> Path:
        made[name] = root / name
        return made[name]

    # Stream-copy cuts: -ss 5.5 lands 2.5 s (75 packets) after the keyframe at 3 s, so the file
    # starts with 75 hidden pre-roll packets (MP4/MOV: an edit list; MKV has none and shows them).
    for ext in ("mp4", "mov", "mkv"):
        run_ffmpeg("-ss", "5.5", "-i", src, "-t", "8", "-c", "copy", out(f"cut_copy.{ext}"))
    # Seeking on the output side instead: ffmpeg copies from the next keyframe (6 s), whose time
    # in the new file is 0.5 s, so the video starts half a second into its timeline.
    run_ffmpeg("-i", src, "-ss", "5.5", "-t", "8", "-c", "copy", out("cut_output_seek.mp4"))
    # Open GOP (x264 open-gop: leading B-frames predicted from the previous GOP), then cut.
    run_ffmpeg(
        "-i", src, *_x264("-bf", "3", "-x264-params", "open-gop=1:keyint=48:min-keyint=48:scenecut=0"),
        out("open_gop.mp4"),
    )  # fmt: skip
    run_ffmpeg("-ss", "3.3", "-i", made["open_gop.mp4"], "-t", "8", "-c", "copy", out("open_gop_cut.mp4"))
    # The same cut into Matroska: no edit list, and the leading pictures of the first GOP (which
    # refer to a GOP that is not there) are stored without any timestamp; ffmpeg never shows them.
    run_ffmpeg("-ss", "3.3", "-i", made["open_gop.mp4"], "-t", "8", "-c", "copy", out("open_gop_cut.mkv"))
    # An edit list with an empty edit: the video starts 1.5 s into the file's timeline.
    run_ffmpeg("-i", src, "-c", "copy", "-output_ts_offset", "1.5", out("edit_list_delay.mp4"))
    # Variable frame rate as a phone writes it: 10 fps for 5 s (every third frame), then 30 fps.
    run_ffmpeg(
        "-i", src, "-vf", r"select='lt(n\,150)*not(mod(n\,3))+gte(n\,150)'", "-fps_mode", "vfr",
        *_x264("-g", "45", "-bf", "2"), out("vfr.mp4"),
    )  # fmt: skip
    for ext in ("mkv", "mov"):
        run_ffmpeg("-i", made["vfr.mp4"], "-c", "copy", out(f"vfr.{ext}"))
    run_ffmpeg(
        "-i", made["vfr.mp4"], "-fps_mode", "passthrough",
        "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "45", out("vfr_vp9.webm"),
    )  # fmt: skip
    for ext in ("mkv", "mp4"):
        run_ffmpeg("-i", made["vfr_vp9.webm"], "-c", "copy", out(f"vfr_vp9.{ext}"))
    # Rotation: a phone clip cut without re-encoding, and a rotation added to a file by ffmpeg.
    run_ffmpeg("-ss", "2.2", "-i", rotated_src, "-t", "2.5", "-c", "copy", out("rot90_cut.mp4"))
    _rotate_by_cli(stored_sideways, out("rot90_tagged.mp4"), 90)
    return made
