"""Speech-to-text times are video times when the audio stream starts after the video.

A 16-second video whose narration (espeak-ng, the fixture's three sentences) starts 5 s in, made
the two ways people get such files: `ffmpeg -itsoffset 5 ... -c copy` (the audio stream itself
starts at 5 s: an MP4 edit list) and `-af adelay=5000` (the audio starts at 0 with 5 s of silence,
re-encoded). Every segment must land where the sentence is heard in the video, for the
OpenAI-compatible engine and for faster-whisper, through the stage both recipes use
(`fill_transcripts`: the ExpVid recipe's `-R stt=` and the SciVideoBench recipe).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from speech_helpers import NarratedVideo

from expvid.construction.sources import discover_sources
from expvid.construction.speech import SpeechStage, parse_stt_spec
from expvid.construction.speech.sources import fill_transcripts, plan_transcripts
from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer
from expvid.media.audio import extract_audio
from expvid.media.synth import scene_frame, write_video
from expvid.media.transcripts import read_transcript

sys.path.insert(0, str(Path(__file__).parent))

DELAY = 5.0
TEXTS = ["Add five hundred microliters of buffer to the tube.", "Vortex the tube for ten seconds.",
         "The balance reads two point five grams."]  # fmt: skip


def _ffmpeg(*args: str | Path) -> None:
    binary = shutil.which("ffmpeg")
    if binary is None:
        pytest.skip("the ffmpeg command is not installed")
    done = subprocess.run([binary, "-hide_banner", "-nostdin", "-y", "-loglevel", "error", *map(str, args)],
                          capture_output=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr.decode(errors="replace")


@pytest.fixture(scope="module")
def late(narrated_video: NarratedVideo, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"itsoffset": ..., "adelay": ...}: the narration starting 5 s into a 16 s video."""
    folder = tmp_path_factory.mktemp("late_audio")
    silent = folder / "silent16.mp4"
    write_video(
        silent, (scene_frame(i, 160, 96, seed=5, fps=4) for i in range(64)), fps=4, preset="ultrafast"
    )
    offset, delayed = folder / "itsoffset.mp4", folder / "adelay.mp4"
    _ffmpeg("-i", silent, "-itsoffset", str(DELAY), "-i", narrated_video.path,
            "-map", "0:v", "-map", "1:a", "-c", "copy", offset)  # fmt: skip
    _ffmpeg("-i", silent, "-i", narrated_video.path, "-map", "0:v", "-map", "1:a", "-c:v", "copy",
            "-af", f"adelay={int(DELAY * 1000)}:all=1", "-c:a", "aac", delayed)  # fmt: skip
    return {"itsoffset": offset, "adelay": delayed}


def _segments(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(path.read_text(encoding="utf-8"))["segments"]


def test_the_audio_streams_start_is_read(late: dict[str, Path], narrated_video: NarratedVideo) -> None:
    assert extract_audio(narrated_video.path).start == pytest.approx(0.0, abs=0.03)
    # the stream copied 5 s later starts then, less the AAC priming (1024 samples) that the edit list
    # hid at 0 and no longer hides: its decoded samples begin 64 ms before the sound
    assert extract_audio(late["itsoffset"]).start == pytest.approx(DELAY - 0.064, abs=0.01)
    assert extract_audio(late["adelay"]).start == pytest.approx(0.0, abs=0.03)  # silence is in the samples


@pytest.mark.parametrize("kind", ["itsoffset", "adelay"])
def test_remote_segments_are_video_times(kind: str, late: dict[str, Path], narrated_video: NarratedVideo,
                                         tmp_path: Path) -> None:  # fmt: skip
    settings = parse_stt_spec
    with TranscriptionServer(TranscriptionScript(texts=TEXTS)) as server:
        stage = SpeechStage(settings(f"openai:whisper-1@{server.openai_base_url}"), tmp_path / "speech")
        segments = _segments(asyncio.run(stage.transcript_for(late[kind])))
    assert [s["text"] for s in segments] == TEXTS
    for segment, (start, end, _text) in zip(segments, narrated_video.cues, strict=True):
        # the loopback server times what it hears: the sentence's sound, in the clip's own clock
        assert segment["start"] == pytest.approx(start + DELAY, abs=0.4), segment
        assert segment["end"] == pytest.approx(end + DELAY, abs=0.6), segment
        for word in segment["words"]:
            assert segment["start"] <= word["start"] <= word["end"] <= segment["end"]


def test_a_cached_narration_muxed_later_is_moved_not_paid_again(late: dict[str, Path],
                                                                 narrated_video: NarratedVideo,
                                                                 tmp_path: Path) -> None:  # fmt: skip
    with TranscriptionServer(TranscriptionScript(texts=TEXTS)) as server:
        stage = SpeechStage(parse_stt_spec(f"openai:whisper-1@{server.openai_base_url}"), tmp_path / "speech")
        plain = _segments(asyncio.run(stage.transcript_for(narrated_video.path)))
        moved_path = asyncio.run(stage.transcript_for(late["itsoffset"]))  # the same coded audio
        assert len(server.transcriptions) == 1 and stage.ledger.cache_hits == 1
    moved = _segments(moved_path)
    shift = json.loads(moved_path.read_text(encoding="utf-8"))["provenance"]["audio_start"]
    assert shift == pytest.approx(DELAY - 0.064, abs=0.01)
    assert [s["start"] for s in moved] == [pytest.approx(s["start"] + shift, abs=0.002) for s in plain]
    # a later run finds the moved transcript without decoding; the dry run knows it is cached
    again = SpeechStage(stage.settings, tmp_path / "speech")
    assert again.cached_path(late["itsoffset"]) == moved_path


def test_faster_whisper_segments_are_video_times(
    late: dict[str, Path], tiny_whisper: Path, tmp_path: Path
) -> None:
    settings = parse_stt_spec(
        f"faster-whisper:{tiny_whisper}", language="en", beam_size=1, temperatures=(0.0,)
    )
    stage = SpeechStage(settings, tmp_path / "speech")
    path = asyncio.run(stage.transcript_for(late["itsoffset"]))
    segments = _segments(path)
    assert segments, "the decoder produced no segment"
    start = extract_audio(late["itsoffset"]).start
    # nothing before the narration starts (the engine's first timestamp is 0.00 of the audio)
    assert min(s["start"] for s in segments) >= start - 0.01
    assert max(s["end"] for s in segments) <= start + 10.0 + 0.1
    assert json.loads(path.read_text(encoding="utf-8"))["provenance"]["audio_start"] == pytest.approx(
        start, abs=0.001
    )


def test_both_recipes_stage_gives_video_times(late: dict[str, Path], narrated_video: NarratedVideo,
                                             tmp_path: Path) -> None:  # fmt: skip
    """`fill_transcripts`: the transcript an experiment gets, read as the build reads it."""
    sources = tmp_path / "sources"
    folder = sources / "late"
    folder.mkdir(parents=True)
    (folder / "video.mp4").symlink_to(late["itsoffset"])
    (folder / "meta.json").write_text(
        json.dumps({"id": "late", "title": "Late narration", "discipline": "Biology"})
    )
    (folder / "paper.md").write_text("# Late narration\n", encoding="utf-8")
    with TranscriptionServer(TranscriptionScript(texts=TEXTS)) as server:
        settings = parse_stt_spec(f"openai:whisper-1@{server.openai_base_url}")
        stage = SpeechStage(settings, tmp_path / "speech")
        filled = asyncio.run(fill_transcripts(discover_sources(sources), stage))
    transcript = filled.sources[0].transcript
    assert transcript is not None and not filled.failures
    cues = read_transcript(transcript).cues
    assert [c.start for c in cues] == [
        pytest.approx(start + DELAY, abs=0.4) for start, _e, _t in narrated_video.cues
    ]
    assert filled.provenance["late"]["audio_start"] == pytest.approx(DELAY - 0.064, abs=0.01)
    plan = plan_transcripts(discover_sources(sources), settings, tmp_path)
    assert plan.cached == {"late": pytest.approx(10.0, abs=0.2)} and not plan.pending
