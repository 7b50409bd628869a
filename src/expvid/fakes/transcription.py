"""A real HTTP server on 127.0.0.1 that speaks OpenAI's `POST /v1/audio/transcriptions`, for tests
and benchmarks.

It checks requests as the API reference describes them and answers in its shapes:
- multipart/form-data with a `file` part (a name whose extension is one of flac, m4a, mp3, mp4,
  mpeg, mpga, oga, ogg, wav, webm) and a `model` field; bodies over 25 MB -> 413;
- `response_format` json (default), text, srt, vtt or verbose_json; `gpt-4o-transcribe` and
  `gpt-4o-mini-transcribe` take json / text only;
- `timestamp_granularities[]` (word, segment) only with verbose_json;
- errors as `{"error": {"message", "type": "invalid_request_error", "param", "code"}}`, 401 for a
  wrong key, 429 with Retry-After when scripted to;
- verbose_json as whisper-1 returns it: `task`, `language` (a name: "english"), `duration`, `text`,
  `segments` (id, seek, start, end, text, tokens, temperature, avg_logprob, compression_ratio,
  no_speech_prob) when segments are asked for, top-level `words` when words are, and `usage`
  (`{"type": "duration", "seconds"}`).

What it "hears": the uploaded WAV is decoded and split into speech regions by energy (20 ms frames
above a threshold, gaps under 0.35 s bridged); region k gets `script[k]` (or "speech k"), its words
spread evenly over it. So times come from the audio really sent, and a test can check them.
"""

from __future__ import annotations

import io
import json
import threading
import wave
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from expvid.fakes.models.server import LoopbackServer

SUPPORTED_EXTENSIONS = ("flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm")
RESPONSE_FORMATS = ("json", "text", "srt", "verbose_json", "vtt")
JSON_ONLY_MODELS = ("gpt-4o-transcribe", "gpt-4o-mini-transcribe")
MAX_BYTES = 25 * 1024 * 1024


def _error(status: int, message: str, param: str | None = None, code: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    return JSONResponse(body, status_code=status)


def speech_regions(
    samples: np.ndarray, rate: int, *, threshold: float = 0.02, gap: float = 0.35
) -> list[tuple[float, float]]:
    """[start, end) seconds of the stretches whose 20 ms RMS exceeds `threshold` (full scale 1.0)."""
    hop = max(1, rate // 50)
    frames = len(samples) // hop
    if frames == 0:
        return []
    pcm = samples[: frames * hop].astype(np.float32).reshape(frames, hop) / 32768.0
    loud = np.sqrt((pcm**2).mean(axis=1)) > threshold
    regions: list[list[float]] = []
    for index in np.flatnonzero(loud):
        start, end = index * hop / rate, (index + 1) * hop / rate
        if regions and start - regions[-1][1] <= gap:
            regions[-1][1] = end
        else:
            regions.append([start, end])
    return [(round(a, 3), round(b, 3)) for a, b in regions if b - a >= 0.1]


@dataclass
class TranscriptionRequest:
    fields: dict[str, list[str]]
    filename: str
    size: int
    duration: float
    authorization: str | None


@dataclass
class TranscriptionScript:
    """What the server says per speech region, and failures to script (429s before answering)."""

    texts: list[str] = field(default_factory=list)
    rate_limited: int = 0
    retry_after: str = "0"


class TranscriptionServer(LoopbackServer):
    """`LoopbackServer` with the transcription route; `transcriptions` records every valid request."""

    def __init__(self, script: TranscriptionScript | None = None, *, api_key: str | None = None) -> None:
        super().__init__("OK", api_key=api_key)
        self.script = script or TranscriptionScript()
        self.transcriptions: list[TranscriptionRequest] = []
        self.refusals: list[dict[str, Any]] = []
        self._guard = threading.Lock()

    def _app(self) -> Starlette:
        app = super()._app()
        app.router.routes.append(Route("/v1/audio/transcriptions", self._transcribe, methods=["POST"]))
        return app

    def _refuse(self, response: JSONResponse) -> JSONResponse:
        with self._guard:
            self.refusals.append(json.loads(bytes(response.body)))
        return response

    async def _transcribe(self, request: Request) -> Response:
        auth = request.headers.get("authorization")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return self._refuse(_error(401, "Incorrect API key provided.", code="invalid_api_key"))
        if int(request.headers.get("content-length") or 0) > MAX_BYTES:
            return self._refuse(_error(413, f"Maximum content size limit ({MAX_BYTES}) exceeded."))
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            return self._refuse(_error(400, "Invalid Content-Type header, expected multipart/form-data."))
        form = await request.form()
        fields: dict[str, list[str]] = {}
        upload = None
        for key, value in form.multi_items():
            if isinstance(value, str):
                fields.setdefault(key, []).append(value)
            elif key == "file":
                upload = value
        if upload is None:
            return self._refuse(_error(400, "you must provide a file parameter", param="file"))
        model = (fields.get("model") or [""])[0]
        if not model:
            return self._refuse(_error(400, "you must provide a model parameter", param="model"))
        extension = (upload.filename or "").rsplit(".", 1)[-1].lower()
        if extension not in SUPPORTED_EXTENSIONS:
            message = f"Invalid file format. Supported formats: {list(SUPPORTED_EXTENSIONS)}"
            return self._refuse(_error(400, message, param="file"))
        response_format = (fields.get("response_format") or ["json"])[0]
        if response_format not in RESPONSE_FORMATS:
            message = f"'{response_format}' is not one of {list(RESPONSE_FORMATS)} - 'response_format'"
            return self._refuse(_error(400, message, param="response_format"))
        if model in JSON_ONLY_MODELS and response_format not in ("json", "text"):
            message = (
                f"response_format '{response_format}' is not compatible with model '{model}'. "
                "Use 'json' or 'text' instead."
            )
            return self._refuse(_error(400, message, param="response_format", code="unsupported_value"))
        granularities = fields.get("timestamp_granularities[]", [])
        bad = [g for g in granularities if g not in ("word", "segment")]
        if bad:
            return self._refuse(
                _error(400, f"'{bad[0]}' is not one of ['word', 'segment']", param="timestamp_granularities")
            )
        if granularities and response_format != "verbose_json":
            message = "timestamp_granularities is only supported with response_format=verbose_json"
            return self._refuse(_error(400, message, param="timestamp_granularities"))
        data = await upload.read()
        try:
            with wave.open(io.BytesIO(data), "rb") as reader:
                rate, width, channels = reader.getframerate(), reader.getsampwidth(), reader.getnchannels()
                samples = np.frombuffer(reader.readframes(reader.getnframes()), dtype="<i2")
            if width != 2:
                raise wave.Error("not 16-bit")
            if channels > 1:
                samples = samples.reshape(-1, channels).mean(axis=1).astype(np.int16)
        except (wave.Error, EOFError, ValueError):
            return self._refuse(_error(400, "Audio file might be corrupted or unsupported", param="file"))
        duration = len(samples) / rate
        with self._guard:
            if self.script.rate_limited > 0:
                self.script.rate_limited -= 1
                body = {
                    "error": {
                        "message": "Rate limit reached for requests",
                        "type": "requests",
                        "param": None,
                        "code": "rate_limit_exceeded",
                    }
                }
                return JSONResponse(body, status_code=429, headers={"retry-after": self.script.retry_after})
            self.transcriptions.append(
                TranscriptionRequest(fields, upload.filename or "", len(data), duration, auth)
            )
        regions = speech_regions(samples, rate)
        segments: list[dict[str, Any]] = []
        words: list[dict[str, Any]] = []
        for index, (start, end) in enumerate(regions):
            text = self.script.texts[index] if index < len(self.script.texts) else f"speech {index + 1}"
            tokens = text.split()
            step = (end - start) / max(1, len(tokens))
            for k, token in enumerate(tokens):
                words.append(
                    {
                        "word": token,
                        "start": round(start + k * step, 2),
                        "end": round(start + (k + 1) * step, 2),
                    }
                )
            segments.append(
                {
                    "id": index,
                    "seek": 0,
                    "start": start,
                    "end": end,
                    "text": f" {text}",
                    "tokens": [50364 + k for k in range(len(tokens))],
                    "temperature": 0.0,
                    "avg_logprob": -0.25,
                    "compression_ratio": 1.2,
                    "no_speech_prob": 0.01,
                }
            )
        text = " ".join(str(s["text"]).strip() for s in segments)
        if response_format == "text":
            return PlainTextResponse(text)
        if response_format in ("srt", "vtt"):
            return PlainTextResponse(text)
        usage = {"type": "duration", "seconds": int(np.ceil(duration))}
        if response_format == "json":
            return JSONResponse({"text": text, "usage": usage})
        verbose: dict[str, Any] = {
            "task": "transcribe",
            "language": "english",
            "duration": round(duration, 2),
            "text": text,
        }
        if not granularities or "segment" in granularities:
            verbose["segments"] = segments
        if "word" in granularities:
            verbose["words"] = words
        verbose["usage"] = usage
        return JSONResponse(verbose)
