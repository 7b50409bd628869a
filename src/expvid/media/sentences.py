"""Timed sentences from a transcript: ExpVid Level-1 action clips ("segment ASR transcripts by
punctuation and align each sentence with its timestamp to cut the video", section 3.1).

How it works
------------
1. Cue texts are joined into one text (`join_cue_texts`: one space between cues, nothing between two
   CJK characters), remembering each cue's character span. Captions break lines wherever the screen
   is full, so one sentence can run over two or three cues and one cue can hold several sentences;
   segmenting the joined text makes both cases the same.
2. The text is segmented with `pysbd` (`char_span=True, clean=False`: offsets into our text, which is
   left untouched). pysbd's positions are used only as cut points, so no character can be lost even
   when pysbd fails to locate one of its own sentences. Then fixes for lab narration:
   a piece ending in an abbreviation that never ends a sentence ("e.g.", "i.e.", "Dr.", "vs.",
   "approx.", "Fig."...) or one that precedes a number ("No. 5", "Fig. 2", "approx. 5 min") is joined
   to the next; so is a piece without terminal punctuation (pysbd reads "Step 1. Add" as a list
   item) and a piece that is only a numbered label ("Step 1.", "Lane 3."); a piece without any letter
   or digit is joined to the previous. Decimal numbers ("0.1 M", "7.4") and units ("10 µL") are
   handled by pysbd itself, except that it reads "500 ms." and "0.5 M." before a capital as an
   abbreviation or an initial; a number, such a unit and a dot followed by a capital ends a
   sentence. Full-width 。！？ end sentences in any language setting. pysbd's
   abbreviation pass is quadratic in the text length, so long texts are segmented in overlapping
   windows (`_pysbd_cuts`), which finds the same cuts in linear time.
3. Each sentence's first and last character are mapped to times (`sentence_times.TimeMap`).

The time-mapping rule
---------------------
- With word times (ASR JSON, karaoke VTT), a sentence starts at the start of its first word and ends
  at the end of its last word.
- Without them, times are interpolated linearly by character position inside each cue: a character
  k of n in a cue shown from s to e is said at s + (e - s) * k / n. Characters, not words, because
  speaking time follows word length ("centrifugation" takes longer than "a"), and the error of either
  choice is bounded by the cue's own duration (typically 2-5 s), whereas no better information exists.
  Characters a cue's words do not cover are interpolated the same way between the nearest word times.
- Gaps between cues hold no text, so they belong to no sentence: a sentence beginning in the cue after
  a gap starts at that cue's start, and one ending at the end of a cue ends at that cue's end.
- Overlapping cues are read as consecutive: a cue ends no later than the next cue starts. This keeps
  times monotone: every sentence has start <= end, starts no earlier than the previous one ended, and
  lies inside [first cue start, last cue end].

Optional post-processing (all off by default)
---------------------------------------------
- `min_words` / `min_duration`: a sentence with fewer words (CJK characters count as words) or
  shorter than this is merged into the neighbour it is closer to in time (the next one on a tie), so
  "Okay." or "Good." does not become its own clip.
- `max_duration`: a longer sentence is split at a break within `max_duration` of its start: among the
  breaks at least a quarter of `max_duration` in (so no tiny pieces), the best kind wins, in order a
  clause mark (, ; :), a cue boundary, any space, and the latest of that kind. This bounds clips from
  unpunctuated ASR output.
Merging runs before splitting.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pysbd

from expvid.media.sentence_times import TimeMap, build_time_map
from expvid.media.transcript_model import Cue, Transcript, is_cjk, join_cue_texts

__all__ = ["Sentence", "segment_sentences"]

#: Abbreviations that do not end a sentence whatever follows (lower case, with their final dot).
NEVER_FINAL = frozenset(
    {
        "e.g.", "i.e.", "eg.", "ie.", "cf.", "viz.", "vs.", "approx.", "ca.", "fig.", "figs.",
        "eq.", "eqs.", "ref.", "refs.", "dr.", "drs.", "prof.", "mr.", "mrs.", "resp.",
        "incl.",
    }
)  # fmt: skip
#: Abbreviations that continue when a number (or "(") follows: "No. 5", "et al. 2020", "p. 12".
BEFORE_NUMBER = frozenset({"no.", "nos.", "al.", "p.", "pp.", "vol.", "ch.", "sect."})
#: A whole piece that is only a numbered label, like "Step 1." or "Tube 3b.", introduces the next one.
_LABEL = re.compile(
    r"(?:step|lane|well|tube|sample|day|part|section|figure|fig\.|table|no\.|number)\s+\d+[a-z]?\.",
    re.IGNORECASE,
)
#: A number and a unit pysbd takes for an abbreviation or an initial ("500 ms.", "0.5 M.", "10 V."),
#: then a capital: a sentence end pysbd misses.
_UNIT_AT_END = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:ms|[mµun]?M|k?V|U|[mµ]?L)\.(?=\s+[A-Z])")
_TERMINALS = frozenset(".!?。！？…‼⁇⁈⁉")
_CLOSERS = frozenset("\"'”’)]}」』）")
_BREAK_MARKS = frozenset(",;:，、；：")


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence with its time span and the indices (into `transcript.cues`) of the cues it spans."""

    text: str
    start: float
    end: float
    cue_indices: tuple[int, ...]

    @property
    def duration(self) -> float:
        return self.end - self.start


def segment_sentences(
    transcript: Transcript | Sequence[Cue],
    *,
    language: str = "en",
    min_words: int | None = None,
    min_duration: float | None = None,
    max_duration: float | None = None,
) -> list[Sentence]:
    """Split a transcript into timed sentences (see the module docstring for every rule).

    `language` is a pysbd language code ("en", "zh", "de", ...; an unknown code raises ValueError).
    A plain sequence of cues is sorted by start first. Returns [] for a transcript without cues.
    """
    if max_duration is not None and max_duration <= 0:
        raise ValueError(f"max_duration must be positive, got {max_duration}")
    cues = transcript.cues if isinstance(transcript, Transcript) else tuple(sorted(transcript, key=_start))
    if not cues:
        return []
    text, spans = join_cue_texts([cue.text for cue in cues])
    time_map = build_time_map(cues, spans)
    pieces = _fix_lab_narration(text, _pysbd_pieces(text, language))
    if min_words is not None or min_duration is not None:
        pieces = _merge_short(text, pieces, time_map, min_words, min_duration)
    cue_starts = [first for first, _last in spans]
    cue_ends = [last for _first, last in spans]
    if max_duration is not None:
        starts_set = frozenset(cue_starts)
        pieces = [
            part for piece in pieces for part in _split_long(text, piece, time_map, starts_set, max_duration)
        ]
    return [_sentence(text, piece, time_map, cue_starts, cue_ends) for piece in pieces]


def _start(cue: Cue) -> float:
    return cue.start


Piece = tuple[int, int]


def _strip(text: str, first: int, last: int) -> Piece:
    while first < last and text[first].isspace():
        first += 1
    while last > first and text[last - 1].isspace():
        last -= 1
    return first, last


#: pysbd's abbreviation pass is quadratic in the text length (1.7 s for 37k characters), so long
#: transcripts are segmented in windows; see `_pysbd_cuts`.
PYSBD_WINDOW = 4000


def _pysbd_cuts(text: str, language: str, window: int = PYSBD_WINDOW) -> list[int]:
    """pysbd's sentence ends in `text`, found window by window in linear time.

    A cut needs only a few words of context on each side, so cuts in the last tenth of a window are
    left for the next window, which starts at the last cut kept (a sentence start).
    """
    segmenter = pysbd.Segmenter(language=language, clean=False, char_span=True)
    margin = window // 10
    cuts: list[int] = []
    begin = 0
    while begin < len(text):
        end = min(begin + window, len(text))
        found = [
            begin + span.end for span in segmenter.segment(text[begin:end]) if 0 < span.end < end - begin
        ]
        if end == len(text):
            cuts.extend(found)
            break
        kept = [cut for cut in found if cut <= end - margin]
        cuts.extend(kept)
        begin = kept[-1] if kept else end - margin
    return cuts


def _pysbd_pieces(text: str, language: str) -> list[Piece]:
    """Cut the text at pysbd's sentence ends; every non-space character lands in exactly one piece."""
    # A closing quote or bracket pysbd left at the head of the next piece belongs to the previous one.
    cuts = {_after_closers(text, cut) for cut in _pysbd_cuts(text, language)}
    cuts.update(match.end() for match in _UNIT_AT_END.finditer(text))
    return _pieces(text, sorted(cuts))


def _pieces(text: str, cuts: list[int]) -> list[Piece]:
    pieces = []
    for first, last in zip([0, *cuts], [*cuts, len(text)], strict=True):
        piece = _strip(text, first, last)
        if piece[0] < piece[1]:
            pieces.append(piece)
    return pieces


def _after_closers(text: str, cut: int) -> int:
    position = cut
    while position < len(text) and text[position].isspace():
        position += 1
    if position < len(text) and text[position] in _CLOSERS:
        following = position + 1
        if following == len(text) or text[following].isspace():
            return following
    return cut


def _last_token(piece_text: str) -> str:
    return piece_text.split()[-1].lstrip("([{\"'“‘").casefold() if piece_text.split() else ""


def _ends_sentence(piece_text: str) -> bool:
    stripped = piece_text.rstrip("".join(_CLOSERS))
    return bool(stripped) and stripped[-1] in _TERMINALS


def _continues(previous: str, following: str) -> bool:
    """Whether pysbd's cut between two pieces is wrong for lab narration."""
    if not any(char.isalnum() for char in following):
        return True
    last = _last_token(previous)
    if last in NEVER_FINAL:
        return True
    if last in BEFORE_NUMBER and (following[0].isdigit() or following[0] == "("):
        return True
    if _LABEL.fullmatch(previous):
        return True
    return not _ends_sentence(previous)


def _fix_lab_narration(text: str, pieces: list[Piece]) -> list[Piece]:
    merged: list[Piece] = []
    for piece in pieces:
        if merged and _continues(text[merged[-1][0] : merged[-1][1]], text[piece[0] : piece[1]]):
            merged[-1] = (merged[-1][0], piece[1])
        else:
            merged.append(piece)
    # A leading piece without letters or digits ("..." before the first sentence) joins the next.
    if len(merged) > 1 and not any(char.isalnum() for char in text[merged[0][0] : merged[0][1]]):
        merged[:2] = [(merged[0][0], merged[1][1])]
    return merged


def _word_count(piece_text: str) -> int:
    count = 0
    in_word = False
    for char in piece_text:
        if is_cjk(char):
            count += char.isalnum()
            in_word = False
        elif char.isspace():
            in_word = False
        elif not in_word:
            in_word = True
            count += 1
    return count


def _merge_short(
    text: str,
    pieces: list[Piece],
    time_map: TimeMap,
    min_words: int | None,
    min_duration: float | None,
) -> list[Piece]:
    """Merge each too-short piece into its nearer neighbour, left to right, until none is left."""

    def too_short(piece: Piece) -> bool:
        if min_words is not None and _word_count(text[piece[0] : piece[1]]) < min_words:
            return True
        duration = time_map.at(piece[1], "end") - time_map.at(piece[0], "start")
        return min_duration is not None and duration < min_duration

    def gap(before: Piece, after: Piece) -> float:
        return time_map.at(after[0], "start") - time_map.at(before[1], "end")

    pieces = list(pieces)
    index = 0
    while index < len(pieces) and len(pieces) > 1:
        if not too_short(pieces[index]):
            index += 1
            continue
        if index == len(pieces) - 1:
            neighbour = index - 1
        elif index == 0:
            neighbour = 1
        else:
            closer_before = gap(pieces[index - 1], pieces[index]) < gap(pieces[index], pieces[index + 1])
            neighbour = index - 1 if closer_before else index + 1
        low, high = sorted((index, neighbour))
        pieces[low : high + 1] = [(pieces[low][0], pieces[high][1])]
        index = low  # pieces before `low` were long enough and are unchanged
    return pieces


def _content_end(text: str, first: int, position: int) -> int:
    """End of the text before `position`, trailing whitespace excluded (not before `first`)."""
    while position > first and text[position - 1].isspace():
        position -= 1
    return position


def _split_long(
    text: str, piece: Piece, time_map: TimeMap, cue_starts: frozenset[int], max_duration: float
) -> list[Piece]:
    """Split a piece longer than `max_duration` at good breaks (see module docstring)."""
    breaks = [
        position
        for position in range(piece[0] + 1, piece[1])
        if (text[position].isspace() and not text[position - 1].isspace())
        or position in cue_starts
        or (text[position - 1] in _BREAK_MARKS and not text[position].isspace())
    ]

    def rank(first: int, position: int) -> int:
        end = _content_end(text, first, position)
        if end > first and text[end - 1] in _BREAK_MARKS:
            return 2
        return 1 if position in cue_starts or position + 1 in cue_starts else 0

    parts: list[Piece] = []
    first = piece[0]
    while time_map.at(piece[1], "end") - time_map.at(first, "start") > max_duration:
        begin = time_map.at(first, "start")
        within: list[tuple[int, float]] = []
        over: int | None = None
        for position in breaks[bisect.bisect_right(breaks, first) :]:
            end = _content_end(text, first, position)
            if end <= first:
                continue
            time = time_map.at(end, "end")
            if time - begin > max_duration:
                over = position
                break
            within.append((position, time))
        if within:
            late = [position for position, time in within if time - begin >= max_duration / 4]
            late = late or [position for position, _time in within]
            best = max(rank(first, position) for position in late)
            chosen = max(position for position in late if rank(first, position) == best)
        elif over is not None:
            chosen = over  # a single word longer than the limit: cut right after it
        else:
            break
        parts.append(_strip(text, first, chosen))
        first = _strip(text, chosen, piece[1])[0]
    parts.append(_strip(text, first, piece[1]))
    return [part for part in parts if part[0] < part[1]]


def _sentence(
    text: str, piece: Piece, time_map: TimeMap, cue_starts: Sequence[int], cue_ends: Sequence[int]
) -> Sentence:
    first, last = piece
    start = time_map.at(first, "start")
    end = max(time_map.at(last, "end"), start)
    # cue spans are sorted and disjoint: the cues overlapping [first, last) are a contiguous run
    low = bisect.bisect_right(cue_ends, first)
    high = bisect.bisect_left(cue_starts, last)
    return Sentence(text=text[first:last], start=start, end=end, cue_indices=tuple(range(low, high)))
