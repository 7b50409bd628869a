"""The transcription stage: audio extracted once, transcripts cached by audio content, counted, priced.

`SpeechStage.transcript_for(video)` returns the path of a Whisper-style JSON transcript for a video:
from the cache when the same narration (sha256 of the coded audio stream, `expvid.media.audio`) was
transcribed with the same settings before, by this build or any other that shares the folder;
otherwise the engine is asked and the result written atomically before it is used, so a killed run
loses at most the video in progress. `--redo transcription[:ID]` gives a video a new *epoch*: its
transcript is asked for afresh and cached beside the old one (`<audio>-<settings>@<epoch>.json`),
and later runs in that epoch reuse it. Engines time segments from the first audio sample; an audio
stream that starts after the video (`AudioTrack.start`) gets a second file beside the cached one,
`<audio>-<settings>[@epoch]+<ms>ms.json`, with every segment and word moved to the video's clock
(the cache stays in the audio's clock, so the same narration muxed at another offset is not paid
for again). `index.json` remembers which audio a video file (path, size, mtime) held and where it
starts, so `--dry-run` knows what is cached without decoding. Every call is counted in
`SpeechLedger`: requests, cache hits, minutes of audio sent and reused, failures, and cost (remote
engines: USD per minute; local: 0; a remote engine without a price: unknown, never 0).
`fill_transcripts` (`sources.py`) runs the stage over a sources folder for either recipe.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from expvid.construction.speech.local import SpeechEngineError, check_local, transcribe_local
from expvid.construction.speech.remote import RemoteTranscriber
from expvid.construction.speech.result import SpeechResult
from expvid.construction.speech.settings import SpeechSettings
from expvid.construction.state import write_atomic
from expvid.media.audio import AudioTrack, extract_audio
from expvid.media.errors import MediaError


@dataclass
class SpeechLedger:
    transcribed: int = 0
    cache_hits: int = 0
    failures: int = 0
    requests: int = 0  # HTTP requests (remote; retries included)
    retries: int = 0
    audio_seconds: float = 0.0  # sent to the engine in this run
    cached_audio_seconds: float = 0.0
    engine_seconds: float = 0.0

    def cost(self, settings: SpeechSettings | None, *, include_cached: bool = False) -> float | None:
        if settings is None:
            return 0.0
        seconds = self.audio_seconds + (self.cached_audio_seconds if include_cached else 0.0)
        if not settings.remote:
            return 0.0
        if settings.price_per_minute is None:
            return None if seconds else 0.0
        return round(seconds / 60 * settings.price_per_minute, 6)

    def as_dict(self, settings: SpeechSettings | None) -> dict[str, Any]:
        data: dict[str, Any] = {
            k: (round(v, 3) if isinstance(v, float) else v) for k, v in asdict(self).items()
        }
        data["minutes"] = round(self.audio_seconds / 60, 3)
        data["cost_this_run"] = self.cost(settings)
        data["cost_including_cached"] = self.cost(settings, include_cached=True)
        data["price_per_minute"] = settings.price_per_minute if settings else None
        data["engine"] = settings.describe() if settings else None
        return data


def transcribe_track(track: AudioTrack, settings: SpeechSettings) -> SpeechResult:
    """One-shot transcription without a cache (blocking; for scripts and tests), in the video's clock."""
    result = (
        asyncio.run(_remote_once(track, settings)) if settings.remote else transcribe_local(track, settings)
    )
    return result.shifted(track.start) if round(track.start * 1000) else result


async def _remote_once(track: AudioTrack, settings: SpeechSettings) -> SpeechResult:
    client = RemoteTranscriber(settings)
    try:
        return await client.transcribe(track)
    finally:
        await client.aclose()


def _stamp(video: Path) -> str:
    stat = video.stat()
    return f"{video.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


class SpeechStage:
    """Transcripts for one build, cached under `root` (CANDIDATES/.build/speech)."""

    def __init__(self, settings: SpeechSettings, root: Path, *, concurrency: int = 4) -> None:
        self.settings = settings
        self.root = root
        self.ledger = SpeechLedger()
        self._remote: RemoteTranscriber | None = None
        # Tracks decoded and waiting for the engine are held in memory (a 10-minute narration is 19 MB):
        # a slot covers decoding and transcribing. Locally the engine runs one track at a time
        # (`local._LOCK`); a second slot decodes the next track meanwhile.
        self._slots = asyncio.Semaphore(concurrency if settings.remote else 2)
        self._index_lock = threading.Lock()
        if not settings.remote:
            check_local(settings)

    def path_for(self, audio_sha256: str, epoch: int = 0, start: float = 0.0) -> Path:
        """The transcript of that audio: in the audio's clock, or moved to a video where it starts at
        `start` seconds (a file of its own when that is not 0)."""
        suffix = f"@{epoch}" if epoch else ""
        milliseconds = round(start * 1000)
        shift = f"+{milliseconds}ms" if milliseconds else ""
        return self.root / f"{audio_sha256[:24]}-{self.settings.key()}{suffix}{shift}.json"

    def _index(self) -> dict[str, tuple[str, float | None]]:
        """Video stamp -> (audio sha256, the audio's start; None when written before starts were)."""
        path = self.root / "index.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            index: dict[str, tuple[str, float | None]] = {}
            for key, value in data.items():
                if isinstance(value, dict):
                    index[str(key)] = (str(value["audio"]), float(value.get("start") or 0.0))
                else:
                    index[str(key)] = (str(value), None)
            return index
        except (OSError, ValueError, AttributeError, KeyError, TypeError):
            return {}

    def _remember(self, video: Path, track: AudioTrack) -> None:
        with self._index_lock:
            entries = {
                k: ({"audio": sha, "start": start} if start is not None else sha)
                for k, (sha, start) in self._index().items()
            }
            entries[_stamp(video)] = {"audio": track.sha256, "start": track.start}
            write_atomic(self.root / "index.json", json.dumps(entries, indent=1, sort_keys=True) + "\n")

    def cached_path(self, video: Path, epoch: int = 0, *, planning: bool = False) -> Path | None:
        """The cached transcript of `video` when its file is known unchanged (no decoding). An entry
        from before audio starts were recorded is found only when `planning` (the dry run counts
        with it; a build decodes once to learn where the audio starts)."""
        entry = self._index().get(_stamp(video))
        if entry is None:
            return None
        sha, start = entry
        if start is None and not planning:
            return None
        path = self.path_for(sha, epoch, start or 0.0)
        return path if path.is_file() else None

    async def transcript_for(self, video: Path, epoch: int = 0) -> Path:
        """Path of the transcript JSON, in the video's clock; `MediaError` / `SpeechEngineError` say
        what went wrong."""
        known = self.cached_path(video, epoch)
        if known is not None:
            result = SpeechResult.read(known)
            self.ledger.cache_hits += 1
            self.ledger.cached_audio_seconds += result.duration
            return known
        async with self._slots:
            try:
                track = await asyncio.to_thread(extract_audio, video)
            except MediaError:
                self.ledger.failures += 1
                raise
            self._remember(video, track)
            base = self.path_for(track.sha256, epoch)
            target = self.path_for(track.sha256, epoch, track.start)
            if target.is_file():
                self.ledger.cache_hits += 1
                self.ledger.cached_audio_seconds += track.duration
                return target
            if base.is_file():
                result = SpeechResult.read(base)
                self.ledger.cache_hits += 1
                self.ledger.cached_audio_seconds += track.duration
            else:
                try:
                    result = await self._transcribe(track)
                except (SpeechEngineError, MediaError):
                    self.ledger.failures += 1
                    raise
                result.provenance["audio_sha256"] = track.sha256
                result.write(base)
                self.ledger.transcribed += 1
                self.ledger.audio_seconds += track.duration
                self.ledger.engine_seconds += float(result.provenance.get("seconds") or 0.0)
        if target != base:
            result.shifted(track.start).write(target)
        return target

    async def _transcribe(self, track: AudioTrack) -> SpeechResult:
        if not self.settings.remote:
            return await asyncio.to_thread(transcribe_local, track, self.settings)
        if self._remote is None:
            self._remote = RemoteTranscriber(self.settings)
        before = (self._remote.requests, self._remote.retries)
        try:
            return await self._remote.transcribe(track)
        finally:
            self.ledger.requests += self._remote.requests - before[0]
            self.ledger.retries += self._remote.retries - before[1]

    async def aclose(self) -> None:
        if self._remote is not None:
            await self._remote.aclose()
            self._remote = None
