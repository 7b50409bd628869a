"""Turning cues as parsed from a file into clean, sorted, de-duplicated `Cue`s.

Every reader produces `RawCue`s (times, text with markup, optional words, and where the cue was in the
file) and hands them to `build_transcript`, so the cleaning rules are the same for SRT, WebVTT and JSON:

1. times are checked first: a cue that ends before it starts is an error naming the cue and its line
   (silently swapping or dropping it would hide a broken file);
2. markup is removed: HTML/VTT tags (`<i>`, `<v Speaker>`, `<c.color>`, inline timestamps
   `<00:00:01.000>`), ASS/SSA override tags (`{\\an8}`), entities (`&amp;`), zero-width characters,
   speaker-change markers (`>>`, a leading `- `) and non-speech annotations (`[Music]`, `[Applause]`);
   whitespace is collapsed to single spaces;
3. cues left empty are dropped;
4. cues are sorted by start time (stable, so equal starts keep file order);
5. rolling captions are de-duplicated (see `dedupe_rolling`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from expvid.media.transcript_model import Cue, Transcript, TranscriptError, Word, align_words

# <rt> holds a ruby reading (pronunciation), not spoken text: drop it with its content.
_RUBY_TEXT = re.compile(r"<rt\b[^<>]*>.*?</rt\s*>", re.IGNORECASE | re.DOTALL)
# Tags start with a letter (or "/" + letter): "< 5 min" and "<5" in narration are left alone.
_MARKUP_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_INLINE_TIMESTAMP = re.compile(r"<\d[\d:.]*>")
_ASS_OVERRIDE = re.compile(r"\{\\[^{}]*\}")
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")
_SPEAKER_MARK = re.compile(r"^\s*(?:>>+|-\s+)\s*")
_NON_SPEECH = re.compile(
    r"[\[(]\s*(?:music|applause|laughter|laughs|inaudible|silence|noise|background noise|"
    r"foreign|crosstalk|no audio|sound|music playing|upbeat music|cheering)\s*[\])]",
    re.IGNORECASE,
)
_MUSIC_NOTES = re.compile("[♪♫♩♬]+")


def clean_cue_text(raw: str) -> str:
    """Plain spoken text of a cue: markup and annotations removed, whitespace collapsed."""
    text = _RUBY_TEXT.sub("", raw)
    text = _MARKUP_TAG.sub("", text)
    text = _INLINE_TIMESTAMP.sub("", text)
    text = _ASS_OVERRIDE.sub("", text)
    text = html.unescape(text)  # after tag removal, so "&lt;b&gt;" stays literal text
    text = _INVISIBLE.sub("", text)
    text = _NON_SPEECH.sub(" ", text)
    text = _MUSIC_NOTES.sub(" ", text)
    lines = [_SPEAKER_MARK.sub("", line) for line in text.splitlines()]
    return " ".join(" ".join(lines).split())


@dataclass(frozen=True, slots=True)
class RawCue:
    """A cue as parsed, before cleaning; `number` (1-based) and `line` locate it in its file for errors."""

    start: float
    end: float
    text: str
    words: tuple[Word, ...] | None = None
    number: int | None = None
    line: int | None = None


def build_transcript(raw_cues: Iterable[RawCue], *, source: Path | None, dedupe: bool = True) -> Transcript:
    """Validate, clean, sort and (optionally) de-duplicate raw cues into a `Transcript`.

    Raises `TranscriptError` naming `source` and the cue for a cue that ends before it starts.
    """
    cleaned: list[Cue] = []
    for raw in raw_cues:
        if raw.end < raw.start:
            raise TranscriptError(
                source,
                f"cue ends at {raw.end:.3f}s, before it starts at {raw.start:.3f}s",
                cue=raw.number,
                line=raw.line,
            )
        text = clean_cue_text(raw.text)
        if not text:
            continue
        words = _clean_words(raw.words)
        try:
            cleaned.append(Cue(start=raw.start, end=raw.end, text=text, words=words))
        except ValueError as exc:
            raise TranscriptError(source, str(exc), cue=raw.number, line=raw.line) from exc
    cleaned.sort(key=lambda cue: cue.start)
    return Transcript(cues=tuple(dedupe_rolling(cleaned) if dedupe else cleaned), source=source)


def _clean_words(words: tuple[Word, ...] | None) -> tuple[Word, ...] | None:
    if not words:
        return None
    kept = []
    for word in words:
        text = clean_cue_text(word.text)
        if text:
            kept.append(word if text == word.text else Word(text=text, start=word.start, end=word.end))
    return tuple(kept) or None


def dedupe_rolling(cues: Sequence[Cue]) -> list[Cue]:
    """Remove text a cue repeats from the end of the previous cue (rolling / roll-up captions).

    YouTube auto-captions show two lines: each cue repeats the previous cue's last line and adds a new
    one, and a 10 ms "hold" cue repeats the line alone. Read naively, every word appears twice.

    For each cue, find the longest run of words that ends the previous cue and starts this one
    (case-insensitive; always against the previous cue as read, so a dropped hold cue still anchors
    the next one). Whether to remove it depends on the file:

    - a rolling file (at least half of the consecutive cue pairs, and at least two, overlap by a word
      or more) has every overlap removed, one-word lines included;
    - otherwise an overlap is removed only when it is at least two words, the whole cue or the whole
      previous cue, because "...add the" / "the tube..." can be normal speech.

    A cue that is entirely a repeat is dropped. Word times of removed words go with them.
    """
    tokens = [[token.casefold() for token in cue.text.split(" ")] for cue in cues]
    overlaps = [0] + [_longest_overlap(tokens[i - 1], tokens[i]) for i in range(1, len(cues))]
    overlapping = sum(1 for size in overlaps if size)
    rolling = overlapping >= 2 and overlapping * 2 >= len(cues) - 1
    kept: list[Cue] = []
    for index, cue in enumerate(cues):
        size = overlaps[index]
        if size and not rolling:
            whole = size in (len(tokens[index]), len(tokens[index - 1]))
            size = size if (size >= 2 or whole) else 0
        if size == 0:
            kept.append(cue)
        elif size < len(tokens[index]):
            # lengths from the original text: casefold can change them ("ß" -> "ss")
            cut = sum(len(token) + 1 for token in cue.text.split(" ")[:size])
            kept.append(_drop_leading_chars(cue, cut))
    return kept


def _longest_overlap(previous: list[str], current: list[str]) -> int:
    for size in range(min(len(previous), len(current)), 0, -1):
        if previous[-size:] == current[:size]:
            return size
    return 0


def _drop_leading_chars(cue: Cue, cut: int) -> Cue:
    words = None
    if cue.words:
        kept = tuple(word for start, _end, word in align_words(cue.text, cue.words) if start >= cut)
        words = kept or None
    return Cue(start=cue.start, end=cue.end, text=cue.text[cut:], words=words)
