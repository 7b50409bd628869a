"""The official rewrite of mm:ss times in SciVideoBench questions into "frame N", quirks included.

Port of `convert_time_to_frames_in_question(question, duration, int(duration))` from the official
lmms-eval task. With total_frames = int(duration) and the duration rounded down to whole seconds,
"frame N" is the time in whole seconds: N = round(t / int(duration) * int(duration)). Behaviour
kept exactly, because it is what the published numbers were measured with:

- ranges "m:ss-m:ss" / "mm:ss – mm:ss" (hyphen or en dash, spaces allowed) become
  "frame a to frame b"; then every remaining time becomes "frame N", except a time directly
  followed by a dash (the lookahead `(?!\\s*[-–])`), which stays as written;
- ANY digit pair around a colon matches: a ratio "1:50" becomes "frame 110", "123:45" becomes
  "1frame 1425" (the regex starts at "23:45"), seconds >= 60 are accepted ("1:75" -> 135);
- a video shorter than one second makes the official code divide by zero; here that is a
  `ValueError` naming the duration (the loader rejects such records up front).

`--keep-times` (prompt variant `keep_times`) skips the rewrite and sends the question as written.
"""

from __future__ import annotations

import re
from datetime import timedelta

_RANGE = re.compile(r"(\d{1,2}:\d{2})\s*[-–]\s*(\d{1,2}:\d{2})")
_SINGLE = re.compile(r"(?<!frame )(\d{1,2}:\d{2})(?!\s*[-–])")


def _seconds(text: str) -> float:
    minutes, seconds = map(int, text.split(":"))
    return timedelta(minutes=minutes, seconds=seconds).total_seconds()


def times_to_frames(question: str, duration: float) -> str:
    """The question as the official task shows it to the model (duration in seconds, >= 1)."""
    total_frames = int(duration)
    if total_frames < 1:
        raise ValueError(
            f"video_duration {duration!r} is under one second; the official rewrite divides by it"
        )
    whole = int(duration)
    total_sec = _seconds(f"{whole // 60:02d}:{whole % 60:02d}")

    def frame(text: str) -> int:
        return round((_seconds(text) / total_sec) * total_frames)

    def replace_range(match: re.Match[str]) -> str:
        return f"frame {frame(match.group(1))} to frame {frame(match.group(2))}"

    question = _RANGE.sub(replace_range, question)
    return _SINGLE.sub(lambda match: f"frame {frame(match.group(1))}", question)
