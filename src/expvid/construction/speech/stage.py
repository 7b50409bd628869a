"""The transcription stage: audio extracted once, transcripts cached by audio content, counted, priced.

`SpeechStage.transcript_for(video)` returns the path of a Whisper-style JSON transcript for a video:
from the cache when the same narration (sha256 of the coded audio stream, `expvid.media.audio`) was
transcribed with the same settings before, by this build or any other that shares the folder;
otherwise the engine is asked and the result written atomically before it is used, so a killed run
loses at most the video in progress. `--redo transcription[:ID]` gives a video a new *epoch*: its
transcript is asked for afresh and cached beside the old one (`<audio>-<settings>@<epoch>.json`),
and later runs in that epoch reuse it. `index.json` remembers which audio a video file (path, size,
mtime) held, so `--dry-run` knows what is cached without decoding. Every call is counted in
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
    """One-shot transcription without a cache (blocking; for scripts and tests)."""
    if settings.remote:
        return asyncio.run(_remote_once(track, settings))
    return transcribe_local(track, settings)


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

    def path_for(self, audio_sha256: str, epoch: int = 0) -> Path:
        suffix = f"@{epoch}" if epoch else ""
        return self.root / f"{audio_sha256[:24]}-{self.settings.key()}{suffix}.json"

    def _index(self) -> dict[str, str]:
        path = self.root / "index.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return {str(k): str(v) for k, v in data.items()}
        except (OSError, ValueError, AttributeError):
            return {}

    def _remember(self, video: Path, audio_sha256: str) -> None:
        with self._index_lock:
            index = self._index()
            index[_stamp(video)] = audio_sha256
            write_atomic(self.root / "index.json", json.dumps(index, indent=1, sort_keys=True) + "\n")

    def cached_path(self, video: Path, epoch: int = 0) -> Path | None:
        """The cached transcript of `video` when its file is known unchanged (no decoding)."""
        sha = self._index().get(_stamp(video))
        if sha is None:
            return None
        path = self.path_for(sha, epoch)
        return path if path.is_file() else None

    async def transcript_for(self, video: Path, epoch: int = 0) -> Path:
        """Path of the transcript JSON; `MediaError` / `SpeechEngineError` say what went wrong."""
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
            self._remember(video, track.sha256)
            path = self.path_for(track.sha256, epoch)
            if path.is_file():
                self.ledger.cache_hits += 1
                self.ledger.cached_audio_seconds += track.duration
                return path
            try:
                result = await self._transcribe(track)
            except (SpeechEngineError, MediaError):
                self.ledger.failures += 1
                raise
        result.provenance["audio_sha256"] = track.sha256
        result.write(path)
        self.ledger.transcribed += 1
        self.ledger.audio_seconds += track.duration
        self.ledger.engine_seconds += float(result.provenance.get("seconds") or 0.0)
        return path

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
