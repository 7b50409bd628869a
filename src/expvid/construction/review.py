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
from typing import TYPE_CHECKING

from expvid.construction.state import write_atomic
from expvid.schema import DataError

if TYPE_CHECKING:
    from expvid.construction.curation import CurationReport

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


def write_review_csv(path: Path, report: CurationReport, reviews: dict[str, Review]) -> None:
    """Rewrite curation.csv from `report`, keeping every row's `review` and `note` (also for
    experiments no longer in the sources, so nothing a person wrote is lost)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    seen: set[str] = set()
    for entry in report.entries:
        seen.add(entry.video_id)
        scores = entry.scores or {}
        review = reviews.get(entry.video_id, Review(""))
        writer.writerow(
            {
                "video_id": entry.video_id,
                "title": entry.title,
                "discipline": entry.discipline,
                "duration_s": "" if entry.duration is None else f"{entry.duration:.1f}",
                **{name: (f"{scores[name]:g}" if name in scores else "") for name in CRITERIA},
                "mean": "" if entry.mean is None else f"{entry.mean:.2f}",
                "rank": entry.rank or "",
                "decision": "keep" if entry.kept or entry.needs_video else "reject",
                "reasons": "; ".join(entry.reasons),
                "longest_gap_s": entry.measured.get("longest_gap_s", ""),
                "tail_without_narration_s": entry.measured.get("tail_without_narration_s", ""),
                "review": review.decision,
                "note": review.note,
            }
        )
    for video_id, review in sorted(reviews.items()):
        if video_id not in seen and (review.decision or review.note):
            writer.writerow({"video_id": video_id, "review": review.decision, "note": review.note})
    write_atomic(path, buffer.getvalue())
