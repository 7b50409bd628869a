"""Any OpenAI-compatible `POST /v1/audio/transcriptions` endpoint (whisper-1, vLLM, self-hosted).

One multipart upload per piece of audio (16-bit WAV; a track over `max_upload_mb` is split at its
quietest moments and the pieces' times shifted back), asking `response_format=verbose_json` with
`timestamp_granularities[]=segment` (and `word`). OpenAI returns words at the top level, not inside
segments; they are put back into the segment whose span holds them. Retries follow the models
package's policy (429 and 5xx retried, Retry-After honoured, full-jitter backoff); any other 4xx is
final and its error body's message is shown as the server wrote it. A model that answers without
segment times (gpt-4o-transcribe only speaks `json` / `text`) is refused with that said: segment times
are what the recipe needs to align questions with the video.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from expvid.construction.speech.local import SpeechEngineError
from expvid.construction.speech.result import SpeechResult, clean_segments
from expvid.construction.speech.settings import SpeechSettings
from expvid.media.audio import AudioTrack, chunk_bounds, wav_bytes
from expvid.models.retry import AttemptFailure, backoff_delay, failure_for_status

#: Bytes of WAV per second of 16 kHz mono 16-bit audio (plus a header per piece).
WAV_BYTES_PER_SECOND = 32_000


def _error_message(body: bytes) -> str:
    try:
        data = json.loads(body)
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and error.get("message"):
            param = f" (param {error['param']})" if error.get("param") else ""
            return f"{error['message']}{param}"
        if isinstance(data, dict) and isinstance(data.get("detail"), str):  # FastAPI-style servers
            return str(data["detail"])
    except (ValueError, AttributeError):
        pass
    return body.decode("utf-8", "replace")[:300]


def _fields(settings: SpeechSettings) -> dict[str, str | list[str]]:
    """The form fields; a repeated field (`timestamp_granularities[]`) is a list, sent once per value."""
    granularities = ["segment", "word"] if settings.word_timestamps else ["segment"]
    fields: dict[str, str | list[str]] = {
        "model": settings.model,
        "response_format": "verbose_json",
        "temperature": "0",
        "timestamp_granularities[]": granularities,
    }
    if settings.language:
        fields["language"] = settings.language
    return fields


def _nest_words(segments: list[dict[str, Any]], words: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Put top-level words into the segment that holds their midpoint (the nearest one otherwise)."""
    if not segments or not words or any(s.get("words") for s in segments):
        return segments
    result = [{**s, "words": []} for s in segments]
    for word in words:
        middle = (float(word["start"]) + float(word["end"])) / 2
        best = min(
            result,
            key=lambda s: (
                0.0
                if s["start"] <= middle <= s["end"]
                else min(abs(s["start"] - middle), abs(s["end"] - middle))
            ),
        )
        best["words"].append(word)
    return result


class RemoteTranscriber:
    """Async client of one endpoint; `calls` counts HTTP requests answered (retries included)."""

    def __init__(self, settings: SpeechSettings) -> None:
        import httpx2

        if not settings.base_url:
            raise SpeechEngineError("remote speech-to-text needs a base URL (openai:MODEL@URL)")
        key = os.environ.get(settings.api_key_env or "OPENAI_API_KEY", "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.settings = settings
        self.url = settings.base_url.rstrip("/") + "/audio/transcriptions"
        self.client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(settings.timeout_s))
        self.requests = 0
        self.retries = 0

    async def aclose(self) -> None:
        await self.client.aclose()

    async def transcribe(self, track: AudioTrack) -> SpeechResult:
        started = time.perf_counter()
        max_seconds = (self.settings.max_upload_mb * 1_000_000 - 1024) / WAV_BYTES_PER_SECOND
        pieces = chunk_bounds(track, max_seconds)
        segments: list[dict[str, Any]] = []
        language = None
        for start, end in pieces:
            body = await self._post(track.slice(start, end) if len(pieces) > 1 else track)
            raw = body.get("segments")
            if not isinstance(raw, list):
                raise SpeechEngineError(
                    f"{self.settings.model} at {self.url} returned no segment timestamps "
                    "(response_format verbose_json with timestamp_granularities[]=segment is needed; "
                    "gpt-4o-transcribe offers only json/text: use whisper-1 or a Whisper server)"
                )
            found = body.get("words")
            words: list[dict[str, Any]] = found if isinstance(found, list) else []
            segments += clean_segments(_nest_words(raw, words), offset=start, limit=end)
            language = language or body.get("language")
        return SpeechResult(
            segments=segments,
            language=language,
            duration=track.duration,
            provenance={
                **self.settings.describe(),
                "language": language,
                "uploads": len(pieces),
                "seconds": round(time.perf_counter() - started, 3),
            },
        )

    async def _post(self, track: AudioTrack) -> dict[str, Any]:
        import httpx2

        payload = wav_bytes(track)
        attempt = 0
        while True:
            try:
                response = await self.client.post(
                    self.url, data=_fields(self.settings), files={"file": ("audio.wav", payload, "audio/wav")}
                )
            except httpx2.TimeoutException as error:
                failure = AttemptFailure.timeout(str(error) or "no answer")
            except httpx2.TransportError as error:
                failure = AttemptFailure.network(str(error) or type(error).__name__)
            else:
                self.requests += 1
                if response.status_code == 200:
                    try:
                        data = response.json()
                    except ValueError:
                        raise SpeechEngineError(f"{self.url}: the reply is not JSON") from None
                    if not isinstance(data, dict):
                        raise SpeechEngineError(f"{self.url}: the reply is not a JSON object")
                    return data
                message = _error_message(response.content)
                failure = failure_for_status(response.status_code, response.headers, message)
                if not failure.retryable:
                    raise SpeechEngineError(f"{self.url}: HTTP {response.status_code}: {message}")
            if attempt >= self.settings.max_retries:
                raise SpeechEngineError(f"{self.url}: {failure.message} (after {attempt + 1} attempts)")
            delay = (
                failure.retry_after_s
                if failure.retry_after_s is not None
                else backoff_delay(attempt, base_s=0.5, max_s=20.0)
            )
            attempt += 1
            self.retries += 1
            await asyncio.sleep(delay)
