"""Character offset -> time, for text joined from timed cues (see `expvid.media.sentences` for the rule).

The map is piecewise linear through anchor points `(offset, time)`: every cue contributes its first
character at its start and its end at its end, and every word that can be located in the cue text
contributes its first character at the word start and its end at the word end. Anchors are made
monotone before use (a cue ends no later than the next cue starts; word times are clamped into their
cue and into order), so the map never runs backwards and every time lies inside the transcript span.

Several anchors can share an offset (the end of one word and the start of the next in unspaced text, a
cue start and its first word start). A sentence *start* takes the latest of them and a sentence *end*
the earliest, which is what makes a sentence start at its first word and end at its last word.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from expvid.media.transcript_model import Cue, align_words

Side = Literal["start", "end"]


@dataclass(frozen=True, slots=True)
class TimeMap:
    """Monotone anchors: `offsets` non-decreasing, `times` non-decreasing, same length, at least one."""

    offsets: tuple[int, ...]
    times: tuple[float, ...]

    def at(self, position: int, side: Side) -> float:
        """Time of the character boundary `position`; `side` picks among anchors sharing that offset."""
        low = bisect.bisect_left(self.offsets, position)
        high = bisect.bisect_right(self.offsets, position)
        if low < high:
            return self.times[high - 1] if side == "start" else self.times[low]
        if low == 0:
            return self.times[0]
        if low == len(self.offsets):
            return self.times[-1]
        left_offset, left_time = self.offsets[low - 1], self.times[low - 1]
        right_offset, right_time = self.offsets[low], self.times[low]
        fraction = (position - left_offset) / (right_offset - left_offset)
        return left_time + (right_time - left_time) * fraction


def build_time_map(cues: Sequence[Cue], spans: Sequence[tuple[int, int]]) -> TimeMap:
    """Anchors for cues sorted by start, each at its `[start, end)` character span in the joined text."""
    if not cues:
        raise ValueError("cannot build a time map without cues")
    offsets: list[int] = []
    times: list[float] = []
    for index, (cue, (first, last)) in enumerate(zip(cues, spans, strict=True)):
        start = cue.start
        end = cue.end
        if index + 1 < len(cues):
            # Overlapping cues (roll-up captions, two speakers) are read as consecutive.
            end = min(end, cues[index + 1].start)
        end = max(end, start)
        offsets.append(first)
        times.append(start)
        latest = start
        for word_first, word_last, word in align_words(cue.text, cue.words or ()):
            word_start = min(max(word.start, latest), end)
            word_end = min(max(word.end, word_start), end)
            offsets.extend((first + word_first, first + word_last))
            times.extend((word_start, word_end))
            latest = word_end
        offsets.append(last)
        times.append(end)
    return TimeMap(offsets=tuple(offsets), times=tuple(times))
