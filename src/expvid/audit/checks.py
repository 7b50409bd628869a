"""Item checks: defects of one item that need no solver and no model.

- near-duplicate options (`duplicates.near_duplicate_pairs`);
- option count: an item with another number of options than its task (the suite's
  `option_counts` where it states them, else the count most items of the task have, when at least
  `USUAL_SHARE` of them have it);
- time ranges: an item's video window, and "m:ss-m:ss" ranges written in its question, start
  before they end and lie inside the video (its duration probed from the file when present, else
  a `video_duration` the release records in the item's meta);
- answer in question: the correct option (or a gold answer of an open item) written word for word
  in the question, where no other option is.

"The answer is one of the options" is checked where a release is read: a record whose answer is
not among its options never becomes an item (`Dataset.problems`); the audit lists those records as
"invalid record".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

from expvid.audit.duplicates import EmbeddingTable, near_duplicate_pairs
from expvid.audit.option_text import option_key, parse_number
from expvid.audit.result import ItemResult
from expvid.schema import AnswerType, Item, VideoRef

#: Share of a task's items that must have one option count before the others are flagged.
USUAL_SHARE = 0.8
#: Slack on "inside the video" (seconds): container rounding.
TIME_SLACK = 0.5
_RANGE = re.compile(r"\b(\d{1,2}:\d{2}(?::\d{2})?)\s*(?:-|–|—|to)\s*(\d{1,2}:\d{2}(?::\d{2})?)\b")


def clock_seconds(text: str) -> float:
    """ "m:ss", "mm:ss" or "h:mm:ss" -> seconds."""
    total = 0.0
    for part in text.split(":"):
        total = total * 60 + int(part)
    return total


@lru_cache(maxsize=4096)
def _probed_duration(path: str) -> float | None:
    from expvid.media.errors import MediaError
    from expvid.media.sampler import probe

    try:
        return float(probe(path).duration)
    except (MediaError, OSError, ValueError):
        return None


def video_duration(item: Item) -> float | None:
    """The item's video duration in seconds: probed from the file, else `meta["video_duration"]`."""
    media = item.media
    if isinstance(media, VideoRef):
        from pathlib import Path

        if Path(media.path).is_file():
            found = _probed_duration(media.path)
            if found is not None:
                return found
    recorded = item.meta.get("video_duration")
    return float(recorded) if isinstance(recorded, int | float) and recorded > 0 else None


def check_duplicates(item: Item, result: ItemResult, embeddings: EmbeddingTable | None) -> None:
    options = item.options or {}
    pairs = near_duplicate_pairs(options, embeddings=embeddings) if len(options) > 1 else []
    if pairs:
        result.flag("near-duplicate options", "; ".join(pair.describe(options) for pair in pairs))


def usual_counts(items: Sequence[Item], declared: Mapping[str, int]) -> dict[str, int]:
    """Per task, the option count its items must have (declared, or the usual one)."""
    counts: dict[str, Counter[int]] = {}
    for item in items:
        if item.answer_type is AnswerType.CHOICE and item.options:
            counts.setdefault(item.task, Counter())[len(item.options)] += 1
    usual: dict[str, int] = {}
    for task, counter in counts.items():
        stated = declared.get(task, declared.get("all"))
        if stated is not None:
            usual[task] = int(stated)
            continue
        count, times = counter.most_common(1)[0]
        if times >= USUAL_SHARE * sum(counter.values()) and len(counter) > 1:
            usual[task] = count
    return usual


def check_option_count(item: Item, result: ItemResult, usual: Mapping[str, int]) -> None:
    expected = usual.get(item.task)
    if expected is None or item.answer_type is not AnswerType.CHOICE:
        return
    have = len(item.options or {})
    if have != expected:
        result.flag("option count", f"{have} options where the task's items have {expected}")


def check_times(item: Item, result: ItemResult, duration: Callable[[Item], float | None]) -> bool:
    """Flag impossible time ranges; True when the item has times that could not be checked against
    the video (its duration unknown)."""
    problems: list[str] = []
    ranges: list[tuple[str, float, float | None]] = []
    media = item.media
    if isinstance(media, VideoRef) and (media.start is not None or media.end is not None):
        ranges.append(("video window", media.start or 0.0, media.end))
    for match in _RANGE.finditer(item.question):
        ranges.append(
            (f"question range {match.group(0)}", clock_seconds(match.group(1)), clock_seconds(match.group(2)))
        )
    if not ranges:
        return False
    length = duration(item)
    for label, start, end in ranges:
        if end is not None and end <= start:
            problems.append(f"{label} ends ({end:g} s) before it starts ({start:g} s)")
        elif length is not None and max(start, end or 0.0) > length + TIME_SLACK:
            problems.append(
                f"{label} ({start:g}-{end if end is not None else start:g} s) passes the video's end ({length:.1f} s)"
            )
    if problems:
        result.flag("time range", "; ".join(problems))
    return length is None


def _contains(text: str, phrase: str) -> bool:
    key = option_key(phrase)
    return bool(key) and f" {key} " in f" {option_key(text)} "


def check_answer_in_question(item: Item, result: ItemResult) -> None:
    if item.answer_type is AnswerType.CHOICE and item.options:
        correct = item.options.get(str(item.answer), "")
        if len(correct.strip()) < 4 or parse_number(correct) is not None:
            return
        others = [t for k, t in item.options.items() if k != item.answer and _contains(item.question, t)]
        if _contains(item.question, correct) and not others:
            result.flag("answer in question", f'the correct option "{correct}" is written in the question')
    elif item.answer_type in (AnswerType.FREE_TEXT, AnswerType.BLANKS) and isinstance(item.answer, list):
        written = [
            str(a) for a in item.answer if len(str(a).strip()) >= 3 and _contains(item.question, str(a))
        ]
        if written:
            result.flag(
                "answer in question",
                "gold answer(s) written in the question: " + ", ".join(f'"{a}"' for a in written),
            )
