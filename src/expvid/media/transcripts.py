"""Timed transcripts: one entry point to read SRT, WebVTT and JSON (ASR) files, and writers back.

ExpVid Level-1 clips come from narration: "we segment ASR transcripts by punctuation and align each
sentence with its timestamp" (section 3.1). This module gives the first half, a clean `Transcript`
whatever the file format; `expvid.media.sentences` gives the second.

Every reader returns cues that are clean (markup removed), non-empty, sorted by start, and with rolling
caption repeats removed (`dedupe=False` keeps them). Anything unusable raises `TranscriptError`, a
`ValueError` whose message names the file and, where it can, the cue number and line.

The format modules (`transcript_srt`, `transcript_vtt`, `transcript_json`) hold the details; this
module re-exports what callers need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from expvid.media.transcript_clean import RawCue, build_transcript, clean_cue_text, dedupe_rolling
from expvid.media.transcript_json import json_text, read_json_transcript, write_json_transcript
from expvid.media.transcript_model import Cue, Transcript, TranscriptError, Word, join_cue_texts
from expvid.media.transcript_srt import read_srt, srt_text, write_srt
from expvid.media.transcript_vtt import read_vtt, vtt_text, write_vtt

__all__ = [
    "READERS",
    "WRITERS",
    "Cue",
    "RawCue",
    "Transcript",
    "TranscriptError",
    "Word",
    "build_transcript",
    "clean_cue_text",
    "dedupe_rolling",
    "join_cue_texts",
    "json_text",
    "read_json_transcript",
    "read_srt",
    "read_transcript",
    "read_vtt",
    "srt_text",
    "vtt_text",
    "write_json_transcript",
    "write_srt",
    "write_transcript",
    "write_vtt",
]

#: File suffix (lower case) -> reader.
READERS: dict[str, Callable[..., Transcript]] = {
    ".srt": read_srt,
    ".vtt": read_vtt,
    ".json": read_json_transcript,
}

#: File suffix (lower case) -> writer.
WRITERS: dict[str, Callable[[Transcript | Sequence[Cue], Path | str], Path]] = {
    ".srt": write_srt,
    ".vtt": write_vtt,
    ".json": write_json_transcript,
}


def read_transcript(path: Path | str, *, dedupe: bool = True) -> Transcript:
    """Read a transcript, choosing the format by file suffix (.srt, .vtt, .json; case-insensitive)."""
    path = Path(path)
    reader = READERS.get(path.suffix.lower())
    if reader is None:
        raise _unknown_format(path, READERS)
    return reader(path, dedupe=dedupe)


def write_transcript(transcript_or_cues: Transcript | Sequence[Cue], path: Path | str) -> Path:
    """Write cues in the format named by the file suffix (.srt, .vtt, .json)."""
    path = Path(path)
    writer = WRITERS.get(path.suffix.lower())
    if writer is None:
        raise _unknown_format(path, WRITERS)
    return writer(transcript_or_cues, path)


def _unknown_format(path: Path, known: Iterable[str]) -> TranscriptError:
    suffix = path.suffix or "(no suffix)"
    return TranscriptError(
        path, f"unknown transcript format {suffix!r}; expected one of {', '.join(sorted(known))}"
    )
