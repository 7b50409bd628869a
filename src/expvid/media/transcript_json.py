"""JSON transcripts: Whisper / faster-whisper / WhisperX style segments, with optional word times.

Accepted shapes (times in seconds):

- `{"segments": [{"start", "end", "text", "words": [{"word" | "text", "start", "end"}, ...]}, ...]}`
  (openai-whisper `result`, faster-whisper segments dumped as dicts, WhisperX output);
- a bare list of such segments;
- `{"cues": [...]}` (what `write_json` writes).

A segment without `text` gets it from its words. A word without times (WhisperX leaves numbers
unaligned) is kept out of the word times rather than invented; the segmenter interpolates over it.
Any other malformed value is an error naming the file and the JSON path, e.g.
`segments[3].words[1].end`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from expvid.media.transcript_clean import RawCue, build_transcript
from expvid.media.transcript_files import cues_of, read_text_file, write_text_atomic
from expvid.media.transcript_model import Cue, Transcript, TranscriptError, Word


def read_json_transcript(path: Path | str, *, dedupe: bool = True) -> Transcript:
    """Read a JSON transcript (see module docstring for the accepted shapes)."""
    path = Path(path)
    text = read_text_file(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"not valid JSON ({exc.msg}, column {exc.colno})"
        raise TranscriptError(path, message, line=exc.lineno) from exc
    key, segments = _segment_list(path, data)
    raw = [_raw_cue(path, f"{key}[{index}]", index, segment) for index, segment in enumerate(segments)]
    return build_transcript(raw, source=path, dedupe=dedupe)


def _segment_list(path: Path, data: Any) -> tuple[str, list[Any]]:
    if isinstance(data, list):
        return "segments", data
    if isinstance(data, dict):
        for key in ("segments", "cues"):
            if isinstance(data.get(key), list):
                return key, data[key]
    raise TranscriptError(path, 'expected {"segments": [...]}, {"cues": [...]} or a list of segments')


def _seconds(path: Path, where: str, number: int, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        message = f"{where} must be a non-negative number of seconds, got {value!r}"
        raise TranscriptError(path, message, cue=number)
    return float(value)


def _raw_cue(path: Path, where: str, index: int, segment: Any) -> RawCue:
    number = index + 1
    if not isinstance(segment, dict):
        raise TranscriptError(path, f"{where} must be an object, got {type(segment).__name__}", cue=number)
    for field in ("start", "end"):
        if field not in segment:
            raise TranscriptError(path, f"{where} has no {field!r}", cue=number)
    start = _seconds(path, f"{where}.start", number, segment["start"])
    end = _seconds(path, f"{where}.end", number, segment["end"])
    words, word_texts = _words(path, where, number, segment.get("words"))
    text = segment.get("text")
    if text is None:
        text = _text_from_words(word_texts)
    if not isinstance(text, str):
        raise TranscriptError(path, f"{where}.text must be a string, got {type(text).__name__}", cue=number)
    return RawCue(start=start, end=end, text=text, words=words, number=number)


def _words(path: Path, where: str, number: int, value: Any) -> tuple[tuple[Word, ...] | None, list[str]]:
    if value is None:
        return None, []
    if not isinstance(value, list):
        raise TranscriptError(path, f"{where}.words must be a list", cue=number)
    words: list[Word] = []
    texts: list[str] = []
    for index, item in enumerate(value):
        at = f"{where}.words[{index}]"
        if not isinstance(item, dict):
            raise TranscriptError(path, f"{at} must be an object", cue=number)
        word_text = item.get("word", item.get("text"))
        if not isinstance(word_text, str):
            raise TranscriptError(path, f'{at} needs a string "word" or "text"', cue=number)
        texts.append(word_text)
        if item.get("start") is None or item.get("end") is None:
            continue
        start = _seconds(path, f"{at}.start", number, item["start"])
        end = _seconds(path, f"{at}.end", number, item["end"])
        if end < start:
            raise TranscriptError(path, f"{at} ends at {end}s, before it starts at {start}s", cue=number)
        words.append(Word(text=word_text.strip(), start=start, end=end))
    return (tuple(words) or None), texts


def _text_from_words(texts: list[str]) -> str:
    # Whisper words carry their leading space (" Hello"); other tools give bare words.
    if any(text[:1].isspace() for text in texts):
        return "".join(texts)
    return " ".join(texts)


def json_text(transcript_or_cues: Transcript | Sequence[Cue]) -> str:
    """The cues as `{"cues": [...]}` JSON, word times included where the cues have them."""
    cues = []
    for cue in cues_of(transcript_or_cues):
        record: dict[str, Any] = {"start": cue.start, "end": cue.end, "text": cue.text}
        if cue.words:
            record["words"] = [{"word": w.text, "start": w.start, "end": w.end} for w in cue.words]
        cues.append(record)
    return json.dumps({"cues": cues}, ensure_ascii=False, indent=1) + "\n"


def write_json_transcript(transcript_or_cues: Transcript | Sequence[Cue], path: Path | str) -> Path:
    """Write cues as JSON (UTF-8, atomically) and return the path."""
    return write_text_atomic(Path(path), json_text(transcript_or_cues))
