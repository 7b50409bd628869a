"""SubRip (.srt) reading and writing through the `srt` package.

`srt` handles a BOM, CRLF, "." instead of "," before the milliseconds and blank lines inside a cue.
It is also lenient where we must not be (a garbled timestamp makes its whole block part of the previous
cue's text; "1,5" is read as 5 ms), so timing lines are checked first: hours, minutes < 60,
seconds < 60 and exactly three millisecond digits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import srt

from expvid.media.transcript_clean import RawCue, build_transcript
from expvid.media.transcript_files import (
    check_cue_count,
    cues_of,
    read_text_file,
    scan_timing_lines,
    write_text_atomic,
)
from expvid.media.transcript_model import Cue, Transcript, TranscriptError

_TIMESTAMP = re.compile(r"(\d+):(\d{1,2}):(\d{1,2})[,.](\d{3})")
_MILLISECOND = timedelta(milliseconds=1)


def parse_srt_timestamp(value: str) -> int | None:
    """`HH:MM:SS,mmm` (or `.mmm`) in milliseconds; None when malformed or out of range."""
    match = _TIMESTAMP.fullmatch(value)
    if not match:
        return None
    hours, minutes, seconds, millis = (int(group) for group in match.groups())
    if minutes > 59 or seconds > 59:
        return None
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis


def read_srt(path: Path | str, *, dedupe: bool = True) -> Transcript:
    """Read an SRT file into a clean `Transcript` (see `transcript_clean` for the cleaning rules)."""
    path = Path(path)
    text = read_text_file(path)
    timings = scan_timing_lines(path, text, parse_srt_timestamp)
    subtitles: list[srt.Subtitle] = []
    try:
        for subtitle in srt.parse(text):
            subtitles.append(subtitle)
    except srt.SRTParseError as exc:
        offset = exc.expected_start + (len(exc.unmatched_content) - len(exc.unmatched_content.lstrip()))
        line = text.count("\n", 0, offset) + 1
        snippet = exc.unmatched_content.strip().splitlines()[0][:60] if exc.unmatched_content.strip() else ""
        raise TranscriptError(
            path, f"not an SRT cue block (starts with {snippet!r})", cue=len(subtitles) + 1, line=line
        ) from exc
    check_cue_count(path, timings, [subtitle.start // _MILLISECOND for subtitle in subtitles])
    raw = [
        RawCue(
            start=(subtitle.start // _MILLISECOND) / 1000,
            end=(subtitle.end // _MILLISECOND) / 1000,
            text=subtitle.content,
            number=timing.cue,
            line=timing.line,
        )
        for subtitle, timing in zip(subtitles, timings, strict=True)
    ]
    return build_transcript(raw, source=path, dedupe=dedupe)


def srt_text(transcript_or_cues: Transcript | Sequence[Cue]) -> str:
    """The cues as SRT text, in the given order, times rounded to the millisecond.

    Written with `srt.compose(reindex=False)`: reindexing would also drop zero-length cues.
    """
    subtitles = [
        srt.Subtitle(
            index=number,
            start=timedelta(milliseconds=round(cue.start * 1000)),
            end=timedelta(milliseconds=round(cue.end * 1000)),
            content=cue.text,
        )
        for number, cue in enumerate(cues_of(transcript_or_cues), start=1)
    ]
    return srt.compose(subtitles, reindex=False)


def write_srt(transcript_or_cues: Transcript | Sequence[Cue], path: Path | str) -> Path:
    """Write cues as an SRT file (UTF-8, atomically) and return the path."""
    return write_text_atomic(Path(path), srt_text(transcript_or_cues))
