"""Local speech-to-text: faster-whisper on a tiny random Whisper converted to CTranslate2 in the test.

The text is noise (random weights); the segments, their times, word alignment, language provenance
and the way the transcript reaches the build are the real path.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from speech_helpers import NarratedVideo

from expvid.construction.speech import SpeechStage, parse_stt_spec
from expvid.media.transcripts import read_transcript


def test_faster_whisper_transcript_is_timed_cached_and_readable(
    narrated_video: NarratedVideo, tiny_whisper: Path, tmp_path: Path
) -> None:
    settings = parse_stt_spec(
        f"faster-whisper:{tiny_whisper}", language="en", beam_size=1, temperatures=(0.0,)
    )
    stage = SpeechStage(settings, tmp_path / "speech")
    path = asyncio.run(stage.transcript_for(narrated_video.path))
    data = json.loads(path.read_text(encoding="utf-8"))
    provenance = data["provenance"]
    assert provenance["engine"] == "faster-whisper" and provenance["language"] == "en"
    assert provenance["model_identity"].startswith("ct2:") and provenance["audio_sha256"]
    segments = data["segments"]
    assert segments, "the decoder produced no segment"
    for segment in segments:
        assert 0 <= segment["start"] <= segment["end"] <= data["duration"] <= narrated_video.seconds + 0.1
        for word in segment.get("words", []):
            assert segment["start"] <= word["start"] <= word["end"] <= segment["end"]
    starts = [s["start"] for s in segments]
    assert starts == sorted(starts)
    transcript = read_transcript(path)  # the model the build reads
    assert len(transcript.cues) >= 1
    assert stage.ledger.transcribed == 1 and stage.ledger.cost(settings) == 0.0
    # resumable: a second stage over the same folder decodes nothing new and asks nothing
    again = SpeechStage(settings, tmp_path / "speech")
    assert asyncio.run(again.transcript_for(narrated_video.path)) == path
    assert again.ledger.cache_hits == 1 and again.ledger.transcribed == 0
    # other settings are another transcript
    greedy = parse_stt_spec(f"faster-whisper:{tiny_whisper}", language="de", beam_size=1, temperatures=(0.0,))
    assert SpeechStage(greedy, tmp_path / "speech").path_for("x" * 24) != stage.path_for("x" * 24)
