"""Times the roles write (mm:ss), checked against the video before anything uses them.

A time range must run forwards ("At 02:05-00:03" is refused: the review page's play button and the
official evaluation prompt, which turns it into "frame 125 to frame 3", would both get it backwards)
and lie inside the video: a start before its end, an end at most the video's length rounded up to
the next whole second (times are whole seconds). The same rules hold for the generator's evidence
and analysis spans, the visual comparer's cues and the times the refiner writes into the question;
a reply that breaks them is re-asked with the problem named.
"""

from __future__ import annotations

import math
import re

from expvid.construction.recipes.scivideobench.schemas import clock, clock_seconds

#: A time in a question: m:ss or mm:ss, not part of a longer h:mm:ss or number.
TIME = re.compile(r"(?<![\d:])(\d{1,2}):([0-5]\d)(?![\d:])")
#: A range in a question: "mm:ss-mm:ss" (hyphen, en or em dash, spaces allowed), "mm:ss to mm:ss",
#: "from mm:ss until mm:ss", "between mm:ss and mm:ss".
RANGE = re.compile(
    r"(?<![\d:])(\d{1,2}:[0-5]\d)(?![\d:])\s*(?:[-–—]|to|until|till)\s*(\d{1,2}:[0-5]\d)(?![\d:])"
    r"|between\s+(\d{1,2}:[0-5]\d)\s+and\s+(\d{1,2}:[0-5]\d)(?![\d:])",
    re.IGNORECASE,
)


def _length(duration: float) -> str:
    return f"{clock(math.ceil(duration))}, {duration:.1f} s"


def span_problem(start: str | None, end: str | None, duration: float, what: str) -> str | None:
    """Why `start`-`end` (mm:ss strings, either may be missing) is not a span of the video, else None."""
    try:
        first = clock_seconds(start) if start is not None else None
        last = clock_seconds(end) if end is not None else None
    except ValueError as error:
        return f"{what}: {error}"
    if first is not None and first >= max(duration, 1.0):
        return f"{what}: starts at {start}, at or after the end of the video ({_length(duration)})"
    if last is not None and last > math.ceil(duration):
        return f"{what}: ends at {end}, after the end of the video ({_length(duration)})"
    if first is not None and last is not None and first >= last:
        return f"{what}: {start}-{end} does not run forwards (the start must be before the end)"
    return None


def question_time_problems(question: str, duration: float) -> list[str]:
    """Backward ranges and times outside the video in a question's text."""
    problems = []
    for match in RANGE.finditer(question):
        start, end = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        problem = span_problem(start, end, duration, "the question's range")
        if problem is not None:
            problems.append(problem)
    for match in TIME.finditer(question):
        seconds = int(match.group(1)) * 60 + int(match.group(2))
        if seconds > math.ceil(duration):
            problems.append(
                f"the question refers to {match.group(0)}, after the end of the video ({_length(duration)})"
            )
    return list(dict.fromkeys(problems))


def question_times(question: str) -> list[int]:
    """Every time the question names, in seconds."""
    return [int(m.group(1)) * 60 + int(m.group(2)) for m in TIME.finditer(question)]
