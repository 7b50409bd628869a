"""The narration track of a video, as speech-to-text needs it: decoded once with PyAV, named by content.

`extract_audio` decodes the first audio stream, resampled to mono 16-bit PCM at 16 kHz (what every
Whisper takes), and names it by the sha256 of the coded audio stream (codec, rate, channels, every
packet's bytes): stream-copying into another container, renaming or `touch`ing the video keeps the
name, so a transcript cached under it is found again; a changed narration is a new name. (The
decoded samples are not a stable name: containers trim the encoder's priming samples differently,
an MP4 edit list versus Matroska's codec delay.) The track also knows where it starts on the
video's clock (`start`): an audio stream may begin after the video (`ffmpeg -itsoffset 5`, a
recorder that starts sound late), and speech-to-text times its segments from the first sample, so
those times are video times only once `start` is added (`expvid.construction.speech`). `chunk_bounds` splits a long track at its quietest moments so each piece fits an upload limit
(OpenAI's transcription endpoint takes 25 MB). `wav_bytes` is the upload form. `mux_audio` adds a
PCM track to a video by stream-copying the video (the sample generator's narrated sources).
"""

from __future__ import annotations

import hashlib
import io
import wave
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np

from expvid.media.errors import CorruptMediaError, EmptyMediaError, MediaError

#: Whisper's input rate.
SAMPLE_RATE = 16_000


@dataclass(frozen=True)
class AudioTrack:
    """Mono 16-bit PCM samples at `rate` Hz and the sha256 that names them; `start` is the time of
    the first sample on the video's timeline (seconds from the time 0 a player shows,
    `expvid.media.timeline`), 0 for audio that starts with the video."""

    samples: np.ndarray  # int16, shape (n,)
    rate: int
    sha256: str
    start: float = 0.0

    @property
    def duration(self) -> float:
        return len(self.samples) / self.rate

    def float32(self) -> np.ndarray:
        """Samples in [-1, 1) (faster-whisper's input)."""
        return self.samples.astype(np.float32) / 32768.0

    def slice(self, start: float, end: float) -> AudioTrack:
        piece = self.samples[round(start * self.rate) : round(end * self.rate)]
        return AudioTrack(piece, self.rate, pcm_sha256(piece, self.rate), self.start + start)


def pcm_sha256(samples: np.ndarray, rate: int) -> str:
    digest = hashlib.sha256(f"pcm_s16le:mono:{rate}:".encode())
    digest.update(np.ascontiguousarray(samples, dtype="<i2").tobytes())
    return digest.hexdigest()


def has_audio(path: Path | str) -> bool:
    try:
        with av.open(str(path)) as container:
            return bool(container.streams.audio)
    except av.error.FFmpegError:
        return False


def extract_audio(path: Path | str, *, rate: int = SAMPLE_RATE) -> AudioTrack:
    """Decode the first audio stream of `path` to mono int16 PCM at `rate`; `MediaError` naming the
    file when there is no audio stream or it cannot be decoded."""
    chunks: list[np.ndarray] = []
    first: float | None = None
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise MediaError(path, "no audio stream (speech-to-text needs the narration track)")
            stream = container.streams.audio[0]
            origin = _timeline_origin(container, stream)
            codec = stream.codec_context
            digest = hashlib.sha256(f"{codec.name}:{codec.sample_rate}:{codec.channels}:{rate}:".encode())
            resampler = av.AudioResampler(format="s16", layout="mono", rate=rate)
            for packet in container.demux(stream):
                if packet.size:
                    digest.update(bytes(packet))
                for frame in packet.decode():
                    if first is None and frame.time is not None:
                        first = float(frame.time)
                    for out in resampler.resample(frame):
                        chunks.append(out.to_ndarray().reshape(-1))
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1))
    except av.error.FFmpegError as error:
        raise CorruptMediaError(path, f"cannot decode the audio ({error})") from None
    samples = np.concatenate(chunks).astype(np.int16) if chunks else np.zeros(0, dtype=np.int16)
    if not len(samples):
        raise EmptyMediaError(path, "the audio stream holds no samples")
    start = round((first if first is not None else origin) - origin, 6)
    return AudioTrack(samples, rate, digest.hexdigest(), start)


def _timeline_origin(container: av.container.InputContainer, audio: av.AudioStream) -> float:
    """The pts (seconds) of the video's time 0: 0, or for running-clock formats (MPEG-TS, ...)
    the first timestamp of the video stream (of the audio when there is no video)."""
    from expvid.media.timeline import running_clock

    if not running_clock(container.format.name):
        return 0.0
    stream = container.streams.video[0] if container.streams.video else audio
    if stream.start_time is None or stream.time_base is None:
        return 0.0
    return float(stream.start_time * stream.time_base)


def wav_bytes(track: AudioTrack) -> bytes:
    """A RIFF WAV file of the track (16-bit mono)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(track.rate)
        writer.writeframes(np.ascontiguousarray(track.samples, dtype="<i2").tobytes())
    return buffer.getvalue()


def read_wav(path: Path | str) -> tuple[np.ndarray, int]:
    """(int16 mono samples, rate) of a 16-bit PCM WAV file (channels are averaged)."""
    with wave.open(str(path), "rb") as reader:
        if reader.getsampwidth() != 2:
            raise MediaError(path, f"expected 16-bit PCM WAV, got {8 * reader.getsampwidth()}-bit")
        channels, rate = reader.getnchannels(), reader.getframerate()
        data = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return data.copy(), rate


def chunk_bounds(track: AudioTrack, max_seconds: float, *, search: float = 0.2) -> list[tuple[float, float]]:
    """[start, end) pieces of at most `max_seconds`, each cut at the quietest 0.25 s in the last
    `search` share of the piece (so a word is rarely split); one piece when the track fits."""
    if max_seconds <= 1:
        raise ValueError("max_seconds must be above one second")
    total = track.duration
    bounds: list[tuple[float, float]] = []
    start = 0.0
    window = max(1, round(0.25 * track.rate))
    while total - start > max_seconds:
        lo = round((start + max_seconds * (1 - search)) * track.rate)
        hi = round((start + max_seconds) * track.rate) - window
        energy = np.abs(track.samples[lo : hi + window].astype(np.int32))
        sums = np.convolve(energy, np.ones(window, dtype=np.int32), mode="valid")
        cut = (lo + int(np.argmin(sums)) + window // 2) / track.rate if len(sums) else start + max_seconds
        bounds.append((start, cut))
        start = cut
    bounds.append((start, total))
    return bounds


def mux_audio(video: Path, samples: np.ndarray, rate: int, out: Path, *, bitrate: int = 64_000) -> None:
    """Write `out`: the video stream of `video` copied as is, plus `samples` (int16 mono) as AAC."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial{out.suffix}")
    with av.open(str(video)) as reader, av.open(str(partial), "w") as writer:
        in_stream = reader.streams.video[0]
        video_out = writer.add_stream_from_template(in_stream)
        audio_out = writer.add_stream("aac", rate=rate)
        assert isinstance(audio_out, av.AudioStream)
        audio_out.layout = "mono"
        audio_out.bit_rate = bitrate
        for packet in reader.demux(in_stream):
            if packet.dts is None:
                continue
            packet.stream = video_out
            writer.mux(packet)
        step = 1024
        pcm = np.ascontiguousarray(samples, dtype=np.int16)
        for offset in range(0, len(pcm), step):
            frame = av.AudioFrame.from_ndarray(
                pcm[offset : offset + step].reshape(1, -1), format="s16", layout="mono"
            )
            frame.sample_rate = rate
            frame.pts = offset
            frame.time_base = Fraction(1, rate)
            for packet in audio_out.encode(frame):
                writer.mux(packet)
        for packet in audio_out.encode(None):
            writer.mux(packet)
    partial.replace(out)
