"""Speech-to-text for videos without a transcript (Whisper over the narration, as recipes' papers do).

Two engines behind one call (`transcribe_track`): local faster-whisper (CTranslate2; a model name or a
converted model folder; word and segment times) and any OpenAI-compatible `/v1/audio/transcriptions`
endpoint (whisper-1, vLLM serving Whisper, self-hosted servers; `verbose_json` with segment and word
times). The narration is decoded once with PyAV (`expvid.media.audio`), transcripts are cached under
the sha256 of the coded audio stream and the settings that change the text (`stage.py`), so a
re-run, a moved or re-muxed video and a second recipe reuse them; calls, audio minutes and cost
are counted and `--dry-run` prices them. A transcript is Whisper-style JSON that `expvid.media.read_transcript`
reads like any other, with its provenance (engine, model, language) beside the segments.
`fill_transcripts` (`sources.py`) gives every experiment of a sources folder that has a video but no
transcript one, for every recipe that reads experiment folders (`-R stt=...`).
"""

from expvid.construction.speech.result import SpeechResult
from expvid.construction.speech.settings import SpeechSettings, parse_stt_spec
from expvid.construction.speech.stage import SpeechLedger, SpeechStage, transcribe_track

__all__ = [
    "SpeechLedger",
    "SpeechResult",
    "SpeechSettings",
    "SpeechStage",
    "parse_stt_spec",
    "transcribe_track",
]
