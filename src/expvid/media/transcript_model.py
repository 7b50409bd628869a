"""The timed-transcript data model shared by the readers, the writers and the sentence segmenter.

Times are float seconds from the start of the video. Cue texts are already clean (no markup, single
spaces); the readers guarantee that, and `Transcript` checks the one invariant the segmenter relies on:
cues are sorted by start time.

Joining cue texts is defined here (not in the segmenter) so that `Transcript.text` and the character
offsets the segmenter maps back to times come from the same rule: cues are joined with one space,
except between two CJK characters, where a space would be a character the speaker never said.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path


class TranscriptError(ValueError):
    """A transcript that cannot be read or used; the message names the file and, when known, the cue/line.

    Attributes are kept separately so callers can report them in their own format.
    """

    def __init__(
        self, source: Path | str | None, message: str, cue: int | None = None, line: int | None = None
    ) -> None:
        self.source = Path(source) if source is not None else None
        self.cue = cue
        self.line = line
        self.reason = message
        where = [str(self.source) if self.source is not None else "<transcript>"]
        if cue is not None:
            where.append(f"cue {cue}")
        if line is not None:
            where.append(f"line {line}")
        super().__init__(f"{': '.join(where)}: {message}")

    def __reduce__(self) -> tuple[type[TranscriptError], tuple[Path | None, str, int | None, int | None]]:
        # Default exception pickling re-calls __init__ with the formatted message only; keep the parts
        # so the error survives a process pool.
        return (type(self), (self.source, self.reason, self.cue, self.line))


def _check_time(value: float, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must not be negative, got {value!r}")


def _settle_span(span: Word | Cue, kind: str) -> None:
    """Check a word's or cue's times (finite, not negative, the end not before the start) and keep
    them as floats; `ValueError` naming the `kind` ("word", "cue") otherwise."""
    _check_time(span.start, f"{kind} start")
    _check_time(span.end, f"{kind} end")
    object.__setattr__(span, "start", float(span.start))
    object.__setattr__(span, "end", float(span.end))
    if span.end < span.start:
        raise ValueError(f"{kind} {span.text!r} ends ({span.end}) before it starts ({span.start})")


@dataclass(frozen=True, slots=True)
class Word:
    """One timed word (or a short run of words) as given by ASR or karaoke-style captions."""

    text: str
    start: float
    end: float

    def __post_init__(self) -> None:
        _settle_span(self, "word")


@dataclass(frozen=True, slots=True)
class Cue:
    """A caption cue: clean text shown from `start` to `end`, with optional word times inside it."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] | None = None

    def __post_init__(self) -> None:
        if self.words is not None and not isinstance(self.words, tuple):
            object.__setattr__(self, "words", tuple(self.words))
        _settle_span(self, "cue")

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Transcript:
    """Cues sorted by start time, and the file they came from (None when built in memory)."""

    cues: tuple[Cue, ...]
    source: Path | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.cues, tuple):
            object.__setattr__(self, "cues", tuple(self.cues))
        if self.source is not None and not isinstance(self.source, Path):
            object.__setattr__(self, "source", Path(self.source))
        for index in range(1, len(self.cues)):
            if self.cues[index].start < self.cues[index - 1].start:
                raise ValueError(
                    f"cues must be sorted by start time: cue {index} starts at {self.cues[index].start}, "
                    f"before cue {index - 1} at {self.cues[index - 1].start}"
                )

    def __len__(self) -> int:
        return len(self.cues)

    def __iter__(self) -> Iterator[Cue]:
        return iter(self.cues)

    @property
    def text(self) -> str:
        """All cue texts joined by `join_cue_texts` (space, or nothing between CJK characters)."""
        return join_cue_texts([cue.text for cue in self.cues])[0]

    @property
    def start(self) -> float:
        """Start of the first cue (0.0 for an empty transcript)."""
        return self.cues[0].start if self.cues else 0.0

    @property
    def end(self) -> float:
        """Latest cue end (0.0 for an empty transcript); compare this with a video's duration."""
        return max((cue.end for cue in self.cues), default=0.0)

    @property
    def duration(self) -> float:
        """Span covered by the cues, `end - start`."""
        return self.end - self.start

    @property
    def has_word_times(self) -> bool:
        """True when every cue carries word times (then sentences are timed from words, not interpolated)."""
        return bool(self.cues) and all(cue.words for cue in self.cues)

    def words(self) -> tuple[Word, ...]:
        """Every timed word of every cue, in cue order (cues without word times contribute nothing)."""
        return tuple(word for cue in self.cues for word in (cue.words or ()))


def is_cjk(char: str) -> bool:
    """True for CJK ideographs, kana, hangul and full-width punctuation: scripts written without spaces."""
    code = ord(char)
    return (
        0x3000 <= code <= 0x30FF  # CJK punctuation, hiragana, katakana
        or 0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xAC00 <= code <= 0xD7AF
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF  # full-width forms: ，。！？
    )


def join_cue_texts(texts: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Join cue texts and return the text plus each cue's `[start, end)` character span in it.

    Texts are expected clean (no surrounding whitespace). The separator is one space, or nothing when
    the previous text ends and the next begins with a CJK character.
    """
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for text in texts:
        if parts:
            previous = parts[-1]
            separator = "" if (previous and text and is_cjk(previous[-1]) and is_cjk(text[0])) else " "
            parts.append(separator)
            position += len(separator)
        spans.append((position, position + len(text)))
        parts.append(text)
        position += len(text)
    return "".join(parts), spans


def align_words(text: str, words: Sequence[Word]) -> list[tuple[int, int, Word]]:
    """Locate each word in `text`, left to right, as `(char_start, char_end, word)`.

    Word texts from ASR do not always match the cleaned cue text (markup removed, different spacing,
    a word missing), so a word that cannot be found after the previous one is skipped rather than
    guessed; the segmenter then interpolates over that stretch.
    """
    aligned: list[tuple[int, int, Word]] = []
    cursor = 0
    for word in words:
        needle = word.text.strip()
        if not needle:
            continue
        found = _find_whole(text, needle, cursor)
        if found < 0:
            continue
        aligned.append((found, found + len(needle), word))
        cursor = found + len(needle)
    return aligned


def _is_word_char(char: str) -> bool:
    return char.isalnum() and not is_cjk(char)


def _find_whole(text: str, needle: str, cursor: int) -> int:
    """First occurrence of `needle` at or after `cursor` that does not cut a Latin word in two.

    Without this, a missing "add" would let the next word "a" match inside it.
    """
    found = text.find(needle, cursor)
    while found >= 0:
        before_ok = found == 0 or not (_is_word_char(needle[0]) and _is_word_char(text[found - 1]))
        after = found + len(needle)
        after_ok = after >= len(text) or not (_is_word_char(needle[-1]) and _is_word_char(text[after]))
        if before_ok and after_ok:
            return found
        found = text.find(needle, found + 1)
    return -1
