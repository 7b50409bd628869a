"""Transcript time arithmetic for the build: formatting for prompts, parsing model timestamps, and
checking them against the transcript.

Timestamps from a model are validated, not trusted (G.2.1: "Start/end times must come directly from
ASR (no invented timestamps)"). The rule, one place for every stage:

- a time must be a cue boundary (a cue's start or end) of the transcript; a time within
  `tolerance` seconds (default 0.5 s) of a boundary is SNAPPED to the nearest boundary and the snap
  is recorded; anything farther is REJECTED with the nearest boundary named in the message.

Clip edges then go into the silence around the narration: a boundary that starts narration after a
pause moves back by half the pause, and one that ends narration before a pause moves forward by half
of it, at most `max_pad` seconds (1 s) each way. Narration typically starts a moment after the action
it describes and ends a moment before the next one, so half the silence belongs to each side; this is
what makes a removed step's cut match the step's footage rather than just its words.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from expvid.construction.llm import InvalidReply
from expvid.media.transcript_model import Cue

_CLOCK = re.compile(r"^\s*(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:[.,]\d+)?)\s*$")
_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*s?\s*$")

DEFAULT_TOLERANCE = 0.5
DEFAULT_MAX_PAD = 1.0


def format_time(seconds: float) -> str:
    """`MM:SS.mmm` (or `H:MM:SS.mmm` from one hour), the format of the G.2.2 example."""
    millis = round(seconds * 1000)
    hours, rest = divmod(millis, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, ms = divmod(rest, 1000)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}.{ms:03d}"
    return f"{minutes:02d}:{secs:02d}.{ms:03d}"


def parse_time(value: str | float | int) -> float:
    """Seconds from `MM:SS.mmm`, `HH:MM:SS,mmm`, `12.5`, `12.5s` or a number; `InvalidReply` otherwise."""
    if isinstance(value, bool):
        raise InvalidReply(f"timestamp {value!r} is not a time")
    if isinstance(value, int | float):
        if value < 0:
            raise InvalidReply(f"timestamp {value!r} is negative")
        return float(value)
    text = str(value)
    clock = _CLOCK.match(text)
    if clock:
        hours, minutes, seconds = clock.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds.replace(",", "."))
    plain = _SECONDS.match(text)
    if plain:
        return float(plain.group(1))
    raise InvalidReply(f"timestamp {text!r} is not a time (expected MM:SS.mmm)")


def timestamped_lines(cues: Sequence[Cue]) -> str:
    """`MM:SS.mmm → MM:SS.mmm: text`, one cue per line."""
    return "\n".join(f"{format_time(c.start)} → {format_time(c.end)}: {c.text}" for c in cues)


@dataclass(frozen=True)
class Snap:
    """A model time checked against the transcript."""

    given: float
    time: float  # the cue boundary it stands for

    @property
    def moved(self) -> float:
        return abs(self.time - self.given)


class Boundaries:
    """The cue boundaries of a transcript, for snapping and for padding clip edges into silence."""

    def __init__(self, cues: Sequence[Cue], *, tolerance: float = DEFAULT_TOLERANCE):
        self.cues = list(cues)
        self.tolerance = tolerance
        self.times = sorted({round(t, 6) for c in self.cues for t in (c.start, c.end)})

    def snap(self, given: float, what: str) -> Snap:
        """The boundary `given` stands for; `InvalidReply` when none is within the tolerance."""
        if not self.times:
            raise InvalidReply("the transcript has no cues")
        index = bisect.bisect_left(self.times, given)
        candidates = self.times[max(0, index - 1) : index + 1]
        nearest = min(candidates, key=lambda t: abs(t - given))
        if abs(nearest - given) > self.tolerance + 1e-9:
            raise InvalidReply(
                f"{what} {format_time(given)} is not a timestamp of the transcript (nearest cue boundary "
                f"{format_time(nearest)} is {abs(nearest - given):.2f} s away; the tolerance is "
                f"{self.tolerance:g} s)"
            )
        return Snap(given=given, time=nearest)

    def cues_within(self, start: float, end: float) -> list[Cue]:
        """Cues whose middle lies in [start, end]."""
        return [c for c in self.cues if start - 1e-6 <= (c.start + c.end) / 2 <= end + 1e-6]

    def _inside_cue(self, t: float) -> bool:
        return any(c.start + 1e-6 < t < c.end - 1e-6 for c in self.cues)

    def pad_start(self, t: float, *, max_pad: float = DEFAULT_MAX_PAD, floor: float = 0.0) -> float:
        """Move a narration start back into the silence before it: half the pause after the previous
        cue, or all of it back to `floor` (the video start) when no cue comes before; at most max_pad."""
        if self._inside_cue(t):
            return t  # inside a cue: there is no silence to move into
        previous = [c.end for c in self.cues if c.end <= t + 1e-6]
        pad = (t - max(previous)) / 2 if previous else t - floor
        return max(floor, t - min(max(0.0, pad), max_pad))

    def pad_end(self, t: float, *, ceiling: float, max_pad: float = DEFAULT_MAX_PAD) -> float:
        """Move a narration end forward into the silence after it: half the pause before the next cue,
        or all of it up to `ceiling` (the video end) when no cue follows; at most max_pad."""
        if self._inside_cue(t):
            return t
        following = [c.start for c in self.cues if c.start >= t - 1e-6]
        pad = (min(following) - t) / 2 if following else ceiling - t
        return min(ceiling, t + min(max(0.0, pad), max_pad))
