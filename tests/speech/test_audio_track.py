"""The narration track: decoded once with PyAV, named by its samples, split at quiet moments."""

from __future__ import annotations

import os
from pathlib import Path

import av
import numpy as np
import pytest
from speech_helpers import NarratedVideo

from expvid.media.audio import AudioTrack, chunk_bounds, extract_audio, pcm_sha256, wav_bytes
from expvid.media.errors import MediaError
from expvid.media.synth import scene_frame, write_video


def test_audio_is_decoded_and_named_by_its_samples(narrated_video: NarratedVideo, tmp_path: Path) -> None:
    track = extract_audio(narrated_video.path)
    assert track.rate == 16_000
    assert track.duration == pytest.approx(narrated_video.seconds, abs=0.1)
    # speech where the cues are, near-silence between them
    for start, _end, _text in narrated_video.cues:
        loud = np.abs(track.samples[int((start + 0.3) * 16000) : int((start + 1.0) * 16000)]).max()
        assert loud > 3000
    assert np.abs(track.samples[int(3.4 * 16000) : int(3.9 * 16000)]).max() < 1500
    # a stream-copied remux in another container, renamed and touched: same audio, same name
    copy = tmp_path / "renamed.mkv"
    _stream_copy(narrated_video.path, copy)
    os.utime(copy, (1, 1))
    assert extract_audio(copy).sha256 == track.sha256


def test_video_without_audio_is_named(tmp_path: Path) -> None:
    silent = tmp_path / "silent.mp4"
    write_video(silent, (scene_frame(i, 64, 48, fps=4) for i in range(8)), fps=4, preset="ultrafast")
    with pytest.raises(MediaError, match=r"silent\.mp4: no audio stream"):
        extract_audio(silent)


def test_long_audio_is_cut_at_its_quietest_moment() -> None:
    rate = 16_000
    rng = np.random.default_rng(0)
    samples = (rng.normal(0, 8000, 30 * rate)).astype(np.int16)
    samples[int(8.6 * rate) : int(9.0 * rate)] = 0  # a pause inside the search window of the first cut
    track = AudioTrack(samples, rate, pcm_sha256(samples, rate))
    bounds = chunk_bounds(track, 10.0)
    assert bounds[0][0] == 0 and bounds[-1][1] == pytest.approx(30.0)
    assert 8.6 <= bounds[0][1] <= 9.0
    assert all(b - a <= 10.0 + 1e-6 for a, b in bounds)
    assert all(bounds[i][1] == bounds[i + 1][0] for i in range(len(bounds) - 1))
    assert wav_bytes(track)[:4] == b"RIFF"


def _stream_copy(source: Path, target: Path) -> None:
    """What `ffmpeg -i in.mp4 -c copy out.mkv` does: every packet copied into another container."""
    with av.open(str(source)) as reader, av.open(str(target), "w") as writer:
        streams = {
            s.index: writer.add_stream_from_template(s)
            for s in reader.streams
            if s.type in ("video", "audio")
        }
        for packet in reader.demux(*reader.streams):
            if packet.dts is None or packet.stream.index not in streams:
                continue
            packet.stream = streams[packet.stream.index]
            writer.mux(packet)
