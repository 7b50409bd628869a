"""The verifier's overlay keeps the released video's sound (SciVideoBench section 2.2's overlay tool).

Sources are made with the `ffmpeg` command, as people have them: H.264 + AAC in MP4 (the audio is
copied packet for packet) and H.264 + 16-bit PCM in Matroska (MP4 does not carry PCM here: the audio
is re-encoded to AAC). The output is read back with PyAV: the audio stream is there, its timestamps
run on without a gap, it lasts as long as the pictures, and the tone is still where it was.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import av
import numpy as np
import pytest
from ffmpeg_cli import REQUIRE_ENV, ffmpeg_command, run_ffmpeg

from expvid.media.audio import extract_audio
from expvid.media.overlay import Overlay, burn_text

SECONDS = 4
#: A 440 Hz tone for the first two seconds, then silence: where the sound is tells whether it moved.
TONE = f"aevalsrc=if(lt(t\\,2)\\,0.5*sin(2*PI*440*t)\\,0):s=48000:d={SECONDS}"


def _make(path: Path, audio_codec: str) -> Path:
    if ffmpeg_command() is None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"the ffmpeg command is missing and {REQUIRE_ENV}=1")
        pytest.skip("the ffmpeg command is not installed")
    run_ffmpeg(
        "-f", "lavfi", "-i", f"testsrc=size=160x96:rate=10:duration={SECONDS}", "-f", "lavfi", "-i", TONE,
        "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", audio_codec, "-shortest", path,
    )  # fmt: skip
    return path


def _audio_packets(path: Path) -> tuple[str, list[tuple[int, int, bytes]], float]:
    """(codec, [(pts, duration, bytes)] in the stream's time base, seconds from first pts to last end)."""
    with av.open(str(path)) as container:
        assert container.streams.audio, f"{path.name}: no audio stream"
        stream = container.streams.audio[0]
        packets = [
            (int(p.pts), int(p.duration or 0), bytes(p))
            for p in container.demux(stream)
            if p.pts is not None and p.size
        ]
        assert stream.time_base is not None
        span = float((packets[-1][0] + packets[-1][1] - packets[0][0]) * stream.time_base)
        return stream.codec_context.name, packets, span


def _video_seconds(path: Path) -> float:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        times = [float(f.pts * stream.time_base) for f in container.decode(stream) if f.pts is not None]
    return max(times) + 0.1  # 10 fps: the last frame's own duration


def _assert_continuous(packets: list[tuple[int, int, bytes]]) -> None:
    for (pts, duration, _), (following, _, _) in itertools.pairwise(packets):
        assert duration > 0 and pts + duration == following, (pts, duration, following)


def _loudness(path: Path) -> tuple[float, float]:
    """RMS of the sound during the tone (0.3-1.7 s) and after it (2.3-3.7 s)."""
    track = extract_audio(path)
    pcm = track.float32()
    rate = track.rate

    def rms(a: float, b: float) -> float:
        return float(np.sqrt(np.mean(pcm[int(a * rate) : int(b * rate)] ** 2)))

    return rms(0.3, 1.7), rms(2.3, 3.7)


OVERLAY = [Overlay("m = 2.50 g", 1.0, 2.0)]


def test_aac_audio_is_copied_packet_for_packet(tmp_path: Path) -> None:
    source = _make(tmp_path / "source.mp4", "aac")
    target = tmp_path / "released.mp4"
    drawn = burn_text(source, target, OVERLAY, preset="ultrafast")
    assert drawn == 10  # the frames of [1, 2) at 10 fps carry the text
    codec, packets, span = _audio_packets(target)
    assert codec == "aac"
    assert packets == _audio_packets(source)[1]  # the same packets, bytes and timestamps
    _assert_continuous(packets)
    assert abs(span - _video_seconds(target)) < 0.05
    assert extract_audio(target).sha256 == extract_audio(source).sha256
    tone, after = _loudness(target)
    assert tone > 0.2 and after < 0.01


def test_pcm_audio_that_mp4_cannot_carry_is_reencoded_in_sync(tmp_path: Path) -> None:
    source = _make(tmp_path / "source.mkv", "pcm_s16le")
    target = tmp_path / "released.mp4"
    burn_text(source, target, OVERLAY, preset="ultrafast")
    codec, packets, span = _audio_packets(target)
    assert codec == "aac"
    _assert_continuous(packets)
    assert abs(span - SECONDS) < 0.05 and abs(span - _video_seconds(target)) < 0.05
    tone, after = _loudness(target)
    assert tone > 0.2 and after < 0.01  # the tone is where it was: in sync with the pictures


def test_a_video_without_audio_stays_silent(tmp_path: Path) -> None:
    source = _make(tmp_path / "with_sound.mp4", "aac")
    silent = tmp_path / "silent.mp4"
    run_ffmpeg("-i", source, "-an", "-c:v", "copy", silent)
    burn_text(silent, tmp_path / "released.mp4", OVERLAY, preset="ultrafast")
    with av.open(str(tmp_path / "released.mp4")) as container:
        assert not container.streams.audio and container.streams.video
