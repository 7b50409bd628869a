"""The human review of curation (ExpVid 3.1: "manually reviewed to exclude videos that predominantly
feature computer-screen displays", then "experts select 30 top-ranked experiments" per discipline).

`curation.csv` in the candidate directory has one row per experiment: the scores, the measured
evidence, the automatic decision and its reasons, and two columns for people:

- `review`: empty (the automatic decision stands), `exclude` (drop it, e.g. a screen recording), or
  `keep` (keep it although a score, the duration or the top-K rule would not; an experiment without
  a transcript still cannot be drafted);
- `note`: free text, shown in the curation report.

`expvid build --review` stops after writing the file; people edit it (any spreadsheet), and the next
run continues from it. Every run rewrites the file with fresh scores and carries `review` and `note`
over by `video_id`, so an exclude list survives re-runs. Reviews never move the duration rule: the
interquartile range is taken over every experiment's duration before any review is applied, so
excluding one experiment does not change what the others are measured against (it only lets the next
one in its discipline into the top K).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from expvid.schema import DataError

CSV_NAME = "curation.csv"
DECISIONS = ("keep", "exclude")
CRITERIA = ("continuity", "alignment", "clarity", "integrity", "focus")
COLUMNS = (
    "video_id", "title", "discipline", "duration_s", *CRITERIA, "mean", "rank", "decision", "reasons",
    "longest_gap_s", "tail_without_narration_s", "review", "note",
)  # fmt: skip


@dataclass(frozen=True)
class Review:
    decision: str  # "keep", "exclude" or "" (none)
    note: str = ""


def read_reviews(path: Path) -> dict[str, Review]:
    """`review` and `note` per video id from a (possibly hand-edited) curation.csv.

    A bad decision word or a duplicated id is a `DataError` naming the line, so a typo never silently
    keeps an experiment someone meant to exclude.
    """
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read the review file ({error})") from None
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None or "video_id" not in reader.fieldnames:
        raise DataError(f"{path}:1: the header has no 'video_id' column")
    reviews: dict[str, Review] = {}
    for line, row in enumerate(reader, start=2):
        video_id = (row.get("video_id") or "").strip()
        if not video_id:
            continue
        decision = (row.get("review") or "").strip().casefold()
        if decision and decision not in DECISIONS:
            raise DataError(
                f"{path}:{line}: review {row.get('review')!r} for {video_id} must be empty, keep or exclude"
            )
        if video_id in reviews:
            raise DataError(f"{path}:{line}: {video_id} is listed twice")
        reviews[video_id] = Review(decision, (row.get("note") or "").strip())
    return reviews
