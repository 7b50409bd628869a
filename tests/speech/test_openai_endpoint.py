"""Remote speech-to-text against a loopback server that speaks OpenAI's transcription protocol.

The server is first checked with the official `openai` SDK (the client people use), so the protocol
it speaks is the real one; then expvid's client is run against it: multipart upload, verbose_json
with segment and word times, error bodies, 429 with Retry-After, the cache by audio content.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import openai
import pytest
from speech_helpers import NarratedVideo

from expvid.construction.speech import SpeechResult, SpeechStage, parse_stt_spec
from expvid.construction.speech.local import SpeechEngineError
from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer
from expvid.media.audio import extract_audio, wav_bytes
from expvid.media.transcripts import read_transcript

TEXTS = [
    cue[2]
    for cue in (
        (0, 0, "Add five hundred microliters of buffer to the tube."),
        (0, 0, "Vortex the tube for ten seconds."),
        (0, 0, "The balance reads two point five grams."),
    )
]


def test_the_official_sdk_reads_the_loopback_server(narrated_video: NarratedVideo, tmp_path: Path) -> None:
    audio = tmp_path / "narration.wav"
    audio.write_bytes(wav_bytes(extract_audio(narrated_video.path)))
    with TranscriptionServer(TranscriptionScript(texts=TEXTS), api_key="sk-test") as server:
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="sk-test", max_retries=0)
        verbose = client.audio.transcriptions.create(
            file=audio,
            model="whisper-1",
            response_format="verbose_json",
            timestamp_granularities=["word", "segment"],
        )
        assert verbose.language == "english"
        assert [s.text.strip() for s in verbose.segments or []] == TEXTS
        assert verbose.words and verbose.words[0].word == "Add"
        sent = server.transcriptions[-1].fields
        assert sent["timestamp_granularities[]"] == ["word", "segment"]
        assert sent["response_format"] == ["verbose_json"]
        with pytest.raises(openai.BadRequestError) as refused:
            client.audio.transcriptions.create(
                file=audio, model="whisper-1", response_format="json", timestamp_granularities=["word"]
            )
        assert refused.value.body["param"] == "timestamp_granularities"  # type: ignore[index]
        with pytest.raises(openai.BadRequestError, match="not compatible with model 'gpt-4o-transcribe'"):
            client.audio.transcriptions.create(
                file=audio, model="gpt-4o-transcribe", response_format="verbose_json"
            )
        plain = client.audio.transcriptions.create(file=audio, model="gpt-4o-transcribe")
        assert plain.text.startswith("Add five hundred")
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(
                base_url=server.openai_base_url, api_key="wrong", max_retries=0
            ).audio.transcriptions.create(file=audio, model="whisper-1")


def _stage(
    server: TranscriptionServer, root: Path, model: str = "whisper-1", **options: object
) -> SpeechStage:
    os.environ["EXPVID_TEST_STT_KEY"] = "sk-test"
    settings = parse_stt_spec(
        f"openai:{model}@{server.openai_base_url}",
        api_key_env="EXPVID_TEST_STT_KEY",
        price_per_minute=0.006,
        **options,
    )
    return SpeechStage(settings, root)


async def _run(stage: SpeechStage, video: Path) -> Path:
    try:
        return await stage.transcript_for(video)
    finally:
        await stage.aclose()


def test_remote_transcript_lands_in_the_build_model_and_is_cached_by_audio(
    narrated_video: NarratedVideo, tmp_path: Path
) -> None:
    script = TranscriptionScript(texts=TEXTS, rate_limited=1, retry_after="0.2")
    with TranscriptionServer(script, api_key="sk-test") as server:
        stage = _stage(server, tmp_path / "speech")
        path = asyncio.run(_run(stage, narrated_video.path))
        assert len(server.transcriptions) == 1 and stage.ledger.retries == 1  # the 429 was waited out
        transcript = read_transcript(path)
        assert [cue.text for cue in transcript.cues] == TEXTS
        for cue, (start, end, _text) in zip(transcript.cues, narrated_video.cues, strict=True):
            assert (
                start - 0.1 <= cue.start < start + 0.4 and cue.end <= end + 0.3
            )  # times from the audio sent
            assert cue.words and cue.words[0].start >= cue.start and cue.words[-1].end <= cue.end + 1e-6
        assert stage.ledger.cost(stage.settings) == pytest.approx(
            narrated_video.seconds / 60 * 0.006, rel=0.02
        )
        data = path.read_text(encoding="utf-8")
        assert (
            '"engine": "openai"' in data
            and '"model": "whisper-1"' in data
            and '"language": "english"' in data
        )
        # the same narration in a copy of the video with another name and time: nothing is sent
        copy = tmp_path / "copy.mp4"
        copy.write_bytes(narrated_video.path.read_bytes())
        again = _stage(server, tmp_path / "speech")
        assert asyncio.run(_run(again, copy)) == path
        assert (
            len(server.transcriptions) == 1
            and again.ledger.cache_hits == 1
            and again.ledger.cost(again.settings) == 0
        )


def test_a_model_without_segment_times_is_refused_with_the_servers_words(
    narrated_video: NarratedVideo, tmp_path: Path
) -> None:
    with TranscriptionServer(TranscriptionScript(texts=TEXTS), api_key="sk-test") as server:
        stage = _stage(server, tmp_path / "speech", model="gpt-4o-transcribe")
        with pytest.raises(
            SpeechEngineError, match="HTTP 400: response_format 'verbose_json' is not compatible"
        ):
            asyncio.run(_run(stage, narrated_video.path))
        assert stage.ledger.failures == 1 and not list((tmp_path / "speech").glob("*-*.json"))


def test_long_audio_is_uploaded_in_pieces_and_times_shifted_back(
    narrated_video: NarratedVideo, tmp_path: Path
) -> None:
    with TranscriptionServer(TranscriptionScript(texts=TEXTS), api_key="sk-test") as server:
        stage = _stage(server, tmp_path / "speech", max_upload_mb=0.15)  # ~4.7 s of WAV per upload
        result = SpeechResult.read(asyncio.run(_run(stage, narrated_video.path)))
        assert len(server.transcriptions) >= 3
        assert all(r.size <= 150_000 for r in server.transcriptions)
        # (the scripted server restarts its texts in every upload, so only the times are compared)
        starts = [segment["start"] for segment in result.segments]
        assert starts == sorted(starts)
        for start, _end, _text in narrated_video.cues:
            assert any(abs(s - start) < 0.4 for s in starts)  # each sentence found at its own time
