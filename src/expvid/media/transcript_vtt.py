"""WebVTT (.vtt) reading and writing through `webvtt-py`.

Times come from `Timestamp.in_milliseconds()`: webvtt-py's `start_in_seconds` drops the milliseconds.
Text comes from the raw cue payload and is cleaned by `transcript_clean` (voice, class and bold tags,
entities). Inline timestamps (`word<00:00:01.200><c> next</c>`, as in YouTube auto-captions) are
not just stripped: on every line that has them they time the words between them, so such captions
get word times like ASR JSON does. Text before a line's first inline timestamp starts at the cue start;
lines without inline timestamps (YouTube's repeated previous line) get no word times.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

import webvtt
from webvtt.errors import MalformedCaptionError, MalformedFileError
from webvtt.models import Timestamp

from expvid.media.transcript_clean import RawCue, build_transcript, clean_cue_text
from expvid.media.transcript_files import (
    check_cue_count,
    cues_of,
    read_text_file,
    scan_timing_lines,
    write_text_atomic,
)
from expvid.media.transcript_model import Cue, Transcript, TranscriptError, Word

_INLINE_TIMESTAMP = re.compile(r"<((?:\d+:)?\d{1,2}:\d{1,2}\.\d{1,3})>")


def parse_vtt_timestamp(value: str) -> int | None:
    """`[HH:]MM:SS.mmm` in milliseconds (webvtt-py's parser); None when malformed or out of range."""
    try:
        return int(Timestamp.from_string(value).in_milliseconds())
    except MalformedCaptionError:
        return None


def read_vtt(path: Path | str, *, dedupe: bool = True) -> Transcript:
    """Read a WebVTT file into a clean `Transcript`, with word times from inline timestamps if present."""
    path = Path(path)
    text = read_text_file(path)
    timings = scan_timing_lines(path, text, parse_vtt_timestamp, skip_prefix="NOTE")
    try:
        captions = webvtt.from_string(text).captions
    except MalformedFileError as exc:
        message = "not a WebVTT file (the first line must start with WEBVTT)"
        raise TranscriptError(path, message, line=1) from exc
    except MalformedCaptionError as exc:  # pragma: no cover - timing lines were checked above
        raise TranscriptError(path, f"malformed cue: {exc}") from exc
    check_cue_count(path, timings, [caption.start_time.in_milliseconds() for caption in captions])
    raw = []
    for caption, timing in zip(captions, timings, strict=True):
        start_ms = caption.start_time.in_milliseconds()
        end_ms = caption.end_time.in_milliseconds()
        raw.append(
            RawCue(
                start=start_ms / 1000,
                end=end_ms / 1000,
                text=caption.raw_text,
                words=_inline_timed_words(caption.raw_text, start_ms, end_ms),
                number=timing.cue,
                line=timing.line,
            )
        )
    return build_transcript(raw, source=path, dedupe=dedupe)


def _inline_timed_words(raw_text: str, start_ms: int, end_ms: int) -> tuple[Word, ...] | None:
    """Words timed by inline timestamps; each runs from its timestamp to the next (or the cue end).

    Timestamps outside the cue or going backwards are clamped, so word times stay inside the cue and
    in order, as the WebVTT spec requires of them anyway.
    """
    words: list[Word] = []
    for line in raw_text.splitlines():
        pieces = _INLINE_TIMESTAMP.split(line)
        if len(pieces) == 1:
            continue
        # pieces = [text, stamp, text, stamp, text, ...]
        times = [start_ms]
        for stamp in pieces[1::2]:
            parsed = parse_vtt_timestamp(stamp)
            times.append(min(max(parsed if parsed is not None else times[-1], times[-1]), end_ms))
        times.append(end_ms)
        for index, chunk in enumerate(pieces[0::2]):
            chunk_text = clean_cue_text(chunk)
            if chunk_text:
                words.append(Word(text=chunk_text, start=times[index] / 1000, end=times[index + 1] / 1000))
    return tuple(words) or None


def _timestamp(seconds: float) -> str:
    milliseconds = round(seconds * 1000)
    hours, rest = divmod(milliseconds, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}"


def vtt_text(transcript_or_cues: Transcript | Sequence[Cue]) -> str:
    """The cues as WebVTT text, in the given order; `&`, `<` and `>` are escaped as WebVTT requires."""
    captions = [
        webvtt.Caption(_timestamp(cue.start), _timestamp(cue.end), html.escape(cue.text, quote=False))
        for cue in cues_of(transcript_or_cues)
    ]
    return str(webvtt.WebVTT(captions=captions).content)


def write_vtt(transcript_or_cues: Transcript | Sequence[Cue], path: Path | str) -> Path:
    """Write cues as a WebVTT file (UTF-8, atomically) and return the path."""
    return write_text_atomic(Path(path), vtt_text(transcript_or_cues))
