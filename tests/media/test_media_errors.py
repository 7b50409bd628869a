"""Bad files and bad requests are `MediaError`s naming the file; no frames are silently lost."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from expvid.media.errors import (
    CorruptMediaError,
    EmptyMediaError,
    MediaError,
    MediaNotFoundError,
    NotAVideoError,
    SamplingError,
    TruncatedMediaError,
    WindowError,
)
from expvid.media.index import clear_index_memo, load_index
from expvid.media.sampler import probe, sample_video, sample_video_arrays


def _truncate(source: Path, target: Path, fraction: float) -> Path:
    data = source.read_bytes()
    target.write_bytes(data[: int(len(data) * fraction)])
    return target


def _audio_only(path: Path) -> Path:
    with av.open(str(path), "w") as container:
        stream = container.add_stream("aac", rate=16000)
        assert isinstance(stream, av.AudioStream)
        stream.layout = "mono"
        for i in range(20):
            samples = np.zeros((1, 1024), dtype=np.float32)
            frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            frame.sample_rate, frame.pts, frame.time_base = 16000, i * 1024, Fraction(1, 16000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def _check(error: pytest.ExceptionInfo[MediaError], path: Path) -> None:
    assert str(path) in str(error.value)
    assert error.value.path == str(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("call", [probe, lambda p: sample_video(p, num_frames=4, cache=False)])
def test_missing_empty_text_and_audio_only_files(call, tmp_path: Path) -> None:
    missing = tmp_path / "nope.mp4"
    with pytest.raises(MediaNotFoundError) as error:
        call(missing)
    _check(error, missing)
    assert isinstance(error.value, FileNotFoundError)

    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(EmptyMediaError) as error:
        call(empty)
    _check(error, empty)

    text = tmp_path / "notes.mp4"
    text.write_text("this is a lab notebook, not a video\n" * 50)
    with pytest.raises(NotAVideoError) as error:
        call(text)
    _check(error, text)

    audio = _audio_only(tmp_path / "voice.m4a")
    with pytest.raises(NotAVideoError, match="no video stream") as error:
        call(audio)
    _check(error, audio)

    with pytest.raises(MediaNotFoundError, match="not a regular file"):
        call(tmp_path)


@pytest.mark.parametrize(
    ("name", "fraction"),
    [("cfr.mp4", 0.6), ("cfr.mp4", 0.98), ("faststart.mp4", 0.6), ("faststart.mp4", 0.97), ("cfr.mkv", 0.9)],
)
def test_truncated_files_are_errors_not_fewer_frames(
    name: str, fraction: float, videos, tmp_path: Path
) -> None:
    path = _truncate(videos[name], tmp_path / f"cut_{name}", fraction)
    with pytest.raises(TruncatedMediaError) as error:
        sample_video(path, num_frames=8, cache=False)
    _check(error, path)
    assert isinstance(error.value, CorruptMediaError)


def test_a_file_replaced_after_indexing_is_reindexed(videos, tmp_path: Path) -> None:
    path = tmp_path / "swap.mp4"
    path.write_bytes(videos["cfr.mp4"].read_bytes())
    assert probe(path).num_frames == 300
    path.write_bytes(videos["rot90.mp4"].read_bytes())
    assert probe(path).num_frames == 90


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({"num_frames": 4, "start": -0.5}, "before the video starts"),
        ({"num_frames": 4, "end": 10.5}, "beyond the end"),
        ({"num_frames": 4, "start": 12.0}, "not before its end"),
        ({"num_frames": 4, "start": 4.0, "end": 4.0}, "not before its end"),
        ({"num_frames": 4, "start": 5.0, "end": 3.0}, "not before its end"),
        ({"times": [1.0, 10.0]}, "outside"),
    ],
)
def test_windows_outside_the_video_are_errors(kwargs: dict, text: str, videos) -> None:
    path = videos["cfr.mp4"]  # 10 s
    with pytest.raises(WindowError, match=text) as error:
        sample_video_arrays(path, cache=False, **kwargs)
    _check(error, path)


@pytest.mark.parametrize(
    ("kwargs", "text"),
    [
        ({}, "exactly one"),
        ({"num_frames": 0}, "num_frames"),
        ({"num_frames": 2, "size": 0}, "size"),
        ({"num_frames": 2, "max_side": 0}, "max_side"),
        ({"num_frames": 2, "image_format": "bmp"}, "image_format"),
        ({"num_frames": 2, "quality": 0}, "quality"),
    ],
)
def test_invalid_settings_are_errors_naming_the_file(kwargs: dict, text: str, videos) -> None:
    path = videos["cfr.mp4"]
    with pytest.raises(SamplingError, match=text) as error:
        sample_video(path, cache=False, **kwargs)
    _check(error, path)


def test_containers_are_closed(videos, open_fds) -> None:
    path = videos["long_gop.mp4"]
    sample_video(path, num_frames=3, cache=False)  # warm up lazily opened libraries
    before = open_fds()
    for _ in range(150):
        clear_index_memo()
        probe(path)
        sample_video(path, num_frames=3, cache=False)
    for _ in range(30):
        with pytest.raises(MediaError):
            probe(Path(__file__))  # a text file: opened, rejected, closed
    assert open_fds() <= before + 2


def _garble_packet(source: Path, target: Path, frame: int) -> Path:
    """Copy `source`, overwriting the coded data of the packet that holds presentation frame `frame`."""
    index = load_index(source)
    packet = int(index.frame_packet[frame])
    with av.open(str(source)) as container:
        packets = [p for p in container.demux(video=0) if p.size]
        position, size = packets[packet].pos, packets[packet].size
    data = bytearray(source.read_bytes())
    noise = np.random.default_rng(1).integers(0, 256, size - 4, dtype=np.uint8)
    data[position + 4 : position + size] = noise.tobytes()
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize("workers", [1, 2])
def test_a_corrupt_stream_error_names_the_frame_and_time_being_decoded(
    workers: int, videos, tmp_path: Path
) -> None:
    source = videos["cfr.mp4"]  # 30 fps, a keyframe every 30 frames
    path = _garble_packet(source, tmp_path / "garbled.mp4", 60)  # the keyframe at 2.000 s
    clear_index_memo()
    assert probe(path).num_frames == 300  # demuxing alone cannot see it
    with pytest.raises(CorruptMediaError) as error:
        sample_video_arrays(path, times=[0.5, 2.1, 7.0], cache=False, workers=workers)
    _check(error, path)
    assert "decoding frame 60 (t=2.000 s, for frame 63 at t=2.100 s) failed" in str(error.value)


def test_a_first_picture_that_cannot_be_decoded_is_refused_when_probing(videos, tmp_path: Path) -> None:
    path = _garble_packet(videos["cfr.mp4"], tmp_path / "bad_start.mp4", 0)
    with pytest.raises(CorruptMediaError) as error:
        probe(path)
    _check(error, path)
    assert "decoding the first picture (video packet 0, t=0.000 s) failed" in str(error.value)
