"""faster-whisper (CTranslate2) on this machine: a model name (fetched by faster-whisper) or a folder.

The model is loaded once per process and settings; transcription runs in a worker thread so the
build's model calls go on meanwhile. faster-whisper is an optional dependency (`pip install
expvid[speech]`); without it the error says so before any work is done.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from expvid.construction.speech.result import SpeechResult, clean_segments
from expvid.construction.speech.settings import SpeechSettings
from expvid.media.audio import AudioTrack

_MODELS: dict[tuple[str, str, str], Any] = {}
_LOCK = threading.Lock()


class SpeechEngineError(RuntimeError):
    """The engine cannot run (not installed, no model) or refused the audio; the message says which."""


def check_local(settings: SpeechSettings) -> None:
    try:
        import faster_whisper  # noqa: F401
    except ImportError:
        raise SpeechEngineError(
            "faster-whisper is not installed: pip install 'expvid[speech]' (or use --stt openai:MODEL@URL)"
        ) from None


def _model(settings: SpeechSettings) -> Any:
    from faster_whisper import WhisperModel

    key = (settings.model, settings.device, settings.compute_type)
    with _LOCK:
        if key not in _MODELS:
            try:
                _MODELS[key] = WhisperModel(
                    settings.model, device=settings.device, compute_type=settings.compute_type, cpu_threads=0
                )
            except (OSError, RuntimeError, ValueError) as error:
                raise SpeechEngineError(
                    f"faster-whisper cannot load model {settings.model!r}: {error}"
                ) from None
        return _MODELS[key]


def transcribe_local(track: AudioTrack, settings: SpeechSettings) -> SpeechResult:
    """Transcribe the whole track (blocking; call it in a thread)."""
    check_local(settings)
    model = _model(settings)
    started = time.perf_counter()
    with _LOCK:  # one transcription at a time per process: CTranslate2 already uses every core
        segments, info = model.transcribe(
            track.float32(),
            language=settings.language,
            word_timestamps=settings.word_timestamps,
            beam_size=settings.beam_size,
            temperature=list(settings.temperatures),
            vad_filter=settings.vad_filter,
        )
        raw = [
            {
                "start": segment.start,
                "end": segment.end,
                "text": segment.text,
                "words": [
                    {"word": w.word, "start": w.start, "end": w.end, "probability": w.probability}
                    for w in segment.words or []
                ],
            }
            for segment in segments  # a generator: decoding happens here
        ]
    return SpeechResult(
        segments=clean_segments(raw, limit=track.duration),
        language=info.language,
        duration=track.duration,
        provenance={
            **settings.describe(),
            "language": info.language,
            "language_probability": round(float(info.language_probability), 4),
            "seconds": round(time.perf_counter() - started, 3),
        },
    )
