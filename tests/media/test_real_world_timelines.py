"""Timelines and pixels as real tools write them, sampled as a player would show them.

Every file is made with the `ffmpeg` command from a coded synthetic video (each frame carries its
number): a camcorder-style MPEG-TS whose clock starts at 601.4 s, an MP4 whose video starts 1.5 s
into its timeline, a Matroska file where two frames share a timestamp (ffmpeg's `setts` filter,
as a 1 ms remux of a fast capture does), non-square pixels (PAL 16:9 coded 720x576; a container
aspect set on stream copy), and a file rewritten in place with `cp --preserve=timestamps`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from ffmpeg_cli import HEIGHT, WIDTH, run_ffmpeg

from expvid.media.cache import FrameCache
from expvid.media.errors import WindowError
from expvid.media.sampler import probe, sample_video, sample_video_arrays
from expvid.media.synth import scene_frame, write_video
from expvid.media.verify import decode_problem

FPS = 30


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, cli_videos: dict[str, Path]) -> dict[str, Path]:
    del cli_videos  # skips the module where the ffmpeg command is missing
    root = tmp_path_factory.mktemp("timelines")
    source = root / "source.mp4"  # 15 s, no B-frames (so `setts` can give two frames one time)
    write_video(
        source, (scene_frame(i, WIDTH, HEIGHT) for i in range(450)), fps=float(FPS), gop=60, bframes=0
    )
    files = {"source": source}

    def out(name: str) -> Path:
        files[name] = root / name
        return files[name]

    # A camcorder / broadcast TS: the clock stands at 600 s when recording starts (+1.4 s mux delay).
    run_ffmpeg("-i", source, "-c", "copy", "-output_ts_offset", "600", "-f", "mpegts", out("camcorder.ts"))
    run_ffmpeg("-i", source, "-c", "copy", "-output_ts_offset", "1.5", out("delayed.mp4"))
    run_ffmpeg(
        "-i", source, "-c", "copy", "-bsf:v", r"setts=ts=if(eq(N\,31)\,PREV_INPTS\,TS)", out("dup.mkv")
    )
    run_ffmpeg(
        "-i", source, "-vf", "scale=720:576,setsar=64/45", "-c:v", "libx264", "-preset", "veryfast",
        "-pix_fmt", "yuv420p", out("pal_16x9.mp4"),
    )  # fmt: skip
    run_ffmpeg("-i", source, "-c", "copy", "-aspect", "16:9", out("aspect_tag.mkv"))
    return files


def codes(path: Path, frame_code, **request: object) -> list[int]:
    sampled = sample_video_arrays(path, size=None, cache=False, **request)  # type: ignore[arg-type]
    return [frame_code(frame.image) for frame in sampled.frames]


def test_a_window_on_a_camcorder_ts_counts_from_its_first_frame(made, frame_code) -> None:
    ts = made["camcorder.ts"]
    info = probe(ts)
    assert (
        info.container == "mpegts"
        and info.start == pytest.approx(601.4)
        and info.timeline_origin == info.start
    )
    sampled = sample_video(ts, num_frames=4, start=2, end=10, size=32, cache=False)
    assert [frame.target for frame in sampled.frames] == pytest.approx([3.0, 5.0, 7.0, 9.0])
    assert [frame.time for frame in sampled.frames] == pytest.approx([3.0, 5.0, 7.0, 9.0], abs=1 / FPS)
    assert sampled.window == pytest.approx((2.0, 10.0))
    # The frames a player shows 2-10 s into the recording: those of the source at 2-10 s.
    request = {"num_frames": 4, "start": 2, "end": 10}
    assert (
        codes(ts, frame_code, **request)
        == codes(made["source"], frame_code, **request)
        == [90, 150, 210, 270]
    )
    with pytest.raises(WindowError, match=r"beyond the end of the video \(15 s\)"):
        sample_video(ts, num_frames=4, start=2, end=20, cache=False)


def test_a_window_before_the_first_frame_is_refused_not_filled_with_it(made, frame_code) -> None:
    delayed = made["delayed.mp4"]
    assert probe(delayed).start == pytest.approx(1.5) and probe(delayed).timeline_origin == 0.0
    with pytest.raises(WindowError, match=r"starts before the video's first frame at 1\.5 s"):
        sample_video(delayed, num_frames=4, start=0, end=1, cache=False)
    with pytest.raises(WindowError, match="before the video's first frame"):
        sample_video(delayed, times=[0.2], cache=False)
    assert codes(delayed, frame_code, num_frames=2, start=1.5, end=2.5) == [7, 22]  # inside: fine


def test_frames_that_share_a_timestamp_decode_as_ffmpeg_shows_them(
    made, frame_code, ffmpeg_reference
) -> None:
    dup = made["dup.mkv"]
    reference = ffmpeg_reference(dup)
    assert reference.frames[30].time == reference.frames[31].time  # the condition is real
    sampled = sample_video_arrays(
        dup, times=[frame.time for frame in reference.frames], size=None, cache=False
    )
    assert [frame_code(f.image) for f in sampled.frames] == [
        reference.at(f.time).code for f in reference.frames
    ]
    assert [f.index for f in sampled.frames].count(31) == 2  # frame 30 lasts no time: 31 is on screen
    assert len(codes(dup, frame_code, num_frames=90)) == 90
    assert decode_problem(dup) is None


@pytest.mark.parametrize(
    ("name", "display", "max_side"),
    [("pal_16x9.mp4", (1024, 576), (512, 288)), ("aspect_tag.mkv", (171, 96), (64, 36))],
)
def test_non_square_pixels_are_shown_at_their_display_aspect(made, name, display, max_side) -> None:
    info = probe(made[name])
    assert (info.width, info.height) == display
    side = max(max_side)
    sampled = sample_video(made[name], num_frames=2, max_side=side, cache=False)
    assert {(frame.width, frame.height) for frame in sampled.frames} == {max_side}
    full = sample_video_arrays(made[name], num_frames=1, size=None, cache=False)
    assert full.frames[0].image.shape[:2] == (display[1], display[0])


def test_the_frame_cache_follows_content_rewritten_in_place_with_the_same_size_and_mtime(
    tmp_path: Path, frame_code
) -> None:
    """`cp --preserve=timestamps` (like `rsync --inplace -t`) writes into the existing file: same
    inode, same size (raw video), the source's mtime. Only the content differs."""
    cache = FrameCache(tmp_path / "cache")
    first, second = tmp_path / "first.nut", tmp_path / "second.nut"
    for path, offset in ((first, 0), (second, 100)):
        write_video(
            path, (scene_frame(offset + i, WIDTH, HEIGHT) for i in range(30)), fps=30.0, codec="rawvideo"
        )
    assert first.stat().st_size == second.stat().st_size
    stamp = second.stat().st_mtime_ns
    target = tmp_path / "dataset" / "clip.nut"
    target.parent.mkdir()
    shutil.copyfile(first, target)
    os.utime(target, ns=(stamp, stamp))
    time.sleep(0.15)  # long enough after the write that the hash is remembered (not "racily clean")
    before = sample_video_arrays(target, num_frames=3, size=None, cache=cache)
    inode = target.stat().st_ino
    subprocess.run(["cp", "--preserve=timestamps", str(second), str(target)], check=True)
    assert (target.stat().st_ino, target.stat().st_size, target.stat().st_mtime_ns) == (
        inode, first.stat().st_size, stamp,
    )  # fmt: skip
    time.sleep(0.15)
    after = sample_video_arrays(target, num_frames=3, size=None, cache=cache)
    assert [frame_code(f.image) for f in before.frames] == [5, 15, 25]
    assert not after.from_cache and [frame_code(f.image) for f in after.frames] == [105, 115, 125]
