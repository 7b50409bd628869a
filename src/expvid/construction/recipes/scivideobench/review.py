"""SciVideoBench candidates on the review platform: import from the published layout, the verifier's
overlay tool, and export back to the published layout.

Import: `scivideobench_1k.jsonl` records become platform records keyed `<type>/<video_id>/<question_id>`
(the platform's task/id form), the video `videos/jove_<video_id>.mp4`, the original record kept under
`svb`. Review: the page shows the question's times as buttons that play the video there, the visual
comparer's cues with their times, the evaluator's rationale and the transcript's provenance (engine,
model, language), plus the overlay tool. Overlay (section 2.2): a value that is spoken but not
visible is burned onto the frames of [start, end) of the released video; each overlay is recorded in
the item's provenance and the audit trail, and the export draws every overlay of a video's verified
items onto `videos/jove_<video_id>.mp4` and lists them in the internal provenance.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from expvid.construction.recipes.scivideobench.platform_tasks import SVB_FILE
from expvid.platform.db.models import Item, utc_now
from expvid.platform.services import audit
from expvid.platform.services.clean_copy import clean_copy
from expvid.platform.services.errors import Actor
from expvid.recipes.api import ReviewHooks
from expvid.schema import RecordProblem, read_jsonl

TASK_OF_TYPE = {
    "Conceptual Reasoning": "conceptual",
    "Hypothetical Reasoning": "hypothetical",
    "Quantitative Reasoning": "quantitative",
}
TYPE_OF_TASK = {task: kind for kind, task in TASK_OF_TYPE.items()}
MAX_OVERLAY_TEXT = 80


class OverlayError(ValueError):
    """An overlay request that breaks a rule; the message says which."""


def _video(root: Path, video_id: str) -> str:
    for suffix in (".mp4", ".MP4", ".mkv"):
        if (root / "videos" / f"jove_{video_id}{suffix}").is_file():
            return f"videos/jove_{video_id}{suffix}"
    return f"videos/jove_{video_id}.mp4"


def svb_records(root: Path, task: str) -> list[tuple[int, dict[str, Any] | RecordProblem]]:
    """The records of one question type, in the platform's record form (bad lines as problems)."""
    path = root / SVB_FILE
    result: list[tuple[int, dict[str, Any] | RecordProblem]] = []
    for line, value in read_jsonl(path):
        if isinstance(value, RecordProblem):
            result.append((line, value))
            continue
        if TASK_OF_TYPE.get(str(value.get("question_type"))) != task:
            continue
        video_id, question_id = value.get("video_id"), value.get("question_id")
        record = {
            "id": f"{video_id}/{question_id}",
            "video_path": _video(root, str(video_id)),
            "question": value.get("question"),
            "options": value.get("options"),
            "answer": value.get("answer"),
            "asr_caption": "",
            "video_id": video_id,
            "category": value.get("discipline"),
            "svb": value,
        }
        result.append((line, record))
    return result


def add_overlay(
    db: Session, actor: Actor, item: Item, text: str, start: float, end: float, position: str = "bottom"
) -> dict[str, Any]:
    """Record an overlay for the item's released video (burned at export)."""
    text = " ".join(text.split())
    if not 1 <= len(text) <= MAX_OVERLAY_TEXT:
        raise OverlayError(f"the overlay text must be 1 to {MAX_OVERLAY_TEXT} characters")
    duration = (item.record.get("svb") or {}).get("video_duration")
    if not 0 <= start < end or (isinstance(duration, int | float) and end > float(duration) + 0.5):
        raise OverlayError(f"the overlay needs 0 <= start < end <= the video's length, got {start}-{end}")
    if position not in ("top", "bottom"):
        raise OverlayError("position must be top or bottom")
    overlay = {"text": text, "start": round(start, 3), "end": round(end, 3), "position": position,
               "by": actor.name, "at": utc_now().isoformat()}  # fmt: skip
    provenance = dict(item.provenance or {})
    provenance["overlays"] = [*provenance.get("overlays", []), overlay]
    item.provenance = provenance
    audit.record(
        db, actor, "item.overlay_added", entity="item", entity_id=item.id, item_id=item.id, after=overlay
    )
    return overlay


def write_release(
    release: Path, items: list[Item], roots: dict[int, Path]
) -> tuple[Counter[str], list[dict[str, Any]]]:
    """`scivideobench_1k.jsonl` and `videos/jove_<id>.mp4` (overlays burned in) for verified items."""
    from expvid.media.overlay import Overlay, burn_text

    counts: Counter[str] = Counter()
    rows, videos = [], {}
    overlays: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i.release_key):
        original = dict(item.record.get("svb") or {})
        original.update({"question": item.question, "options": item.options, "answer": item.answer,
                         "question_type": TYPE_OF_TASK[item.task]})  # fmt: skip
        rows.append(original)
        counts[item.task] += 1
        videos[item.video_id] = roots[item.batch_id] / item.video_path
        overlays[item.video_id] += (item.provenance or {}).get("overlays", [])
    release.mkdir(parents=True, exist_ok=True)
    with (release / SVB_FILE).open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    notes = []
    for video_id, source in sorted(videos.items()):
        target = release / "videos" / f"jove_{video_id}.mp4"
        wanted = overlays.get(video_id, [])
        if wanted:
            drawn = burn_text(
                source, target, [Overlay(o["text"], o["start"], o["end"], o["position"]) for o in wanted]
            )
            notes.append({"video_id": video_id, "video": target.relative_to(release).as_posix(), "overlays": wanted,
                          "frames_with_text": drawn})  # fmt: skip
        else:
            copied = clean_copy(source, target.parent, prefix=f".jove_{video_id}_")
            copied.replace(target)
    return counts, notes


def _seconds(text: str | None) -> float | None:
    if not text or ":" not in str(text):
        return None
    minutes, _, seconds = str(text).partition(":")
    try:
        return int(minutes) * 60 + float(seconds)
    except ValueError:
        return None


def review_view(item: Item, paper: str | None) -> dict[str, Any]:
    """What the verifier's page shows beside the question (templates never decide)."""
    import re

    provenance = item.provenance or {}
    times = []
    for match in re.finditer(
        r"(?<![\d:])(\d{1,2}):([0-5]\d)(?:\s*[-–]\s*(\d{1,2}):([0-5]\d))?(?![\d:])", item.question
    ):
        start = int(match.group(1)) * 60 + int(match.group(2))
        end = int(match.group(3)) * 60 + int(match.group(4)) if match.group(3) else None
        times.append({"label": match.group(0), "start": start, "end": end})
    cues = [
        {**cue, "start_s": _seconds(cue.get("start")), "end_s": _seconds(cue.get("end"))}
        for cue in provenance.get("visual_cues", []) or []
        if isinstance(cue, dict)
    ]
    return {
        "times": times,
        "cues": cues,
        "rationale": (provenance.get("evaluator") or {}).get("rationale"),
        "transcript": provenance.get("transcript") or {},
        "suggestions": provenance.get("overlay_suggestions") or [],
        "overlays": provenance.get("overlays") or [],
        "duration": (item.record.get("svb") or {}).get("video_duration"),
        "paper": paper,
    }


class SciVideoBenchReviewHooks(ReviewHooks):
    """The review platform's view of this recipe: the Human Verifier's rules (section 2.2), the
    published file, the time-button panel with its overlay tool, and the release."""

    #: Section 2.2, "Human Verifier".
    level_rules = (
        "Check the timestamps in the question (play them with the time buttons): the question must be "
        "answerable from what the video shows at those times.",
        "Read the visual comparer's cues beside the question: every visual cue the reasoning needs must be visible.",
        "A critical value that is spoken but not visible (a mass, a temperature): add an overlay that burns it "
        "onto the relevant frames of the released video, over the stretch where it matters.",
        "The answer must match the video content and the reasoning path; the question must be close to the "
        "core scientific contribution of the experiment. Correct errors and improve clarity.",
    )
    paper_minutes = "not reported"
    panel_template = "scivideobench_panel.html"

    def read_records(self, root: Path, task: str) -> list[tuple[int, Any]] | None:
        return list(svb_records(root, task))

    def review_panel(self, item: Any, paper: str | None) -> dict[str, Any] | None:
        return review_view(item, paper)

    def write_release(
        self, release: Path, items: list[Any], roots: dict[int, Path]
    ) -> tuple[Mapping[str, int], list[dict[str, Any]]] | None:
        return write_release(release, items, roots)

    def release_path(self, item: Any) -> str:
        return f"videos/jove_{item.video_id}.mp4"

    def add_overlay(
        self, db: Any, actor: Any, item: Any, text: str, start: float, end: float, position: str
    ) -> Any:
        """The verifier's overlay tool (the page kind `timed-mcq` offers it)."""
        return add_overlay(db, actor, item, text, start, end, position)
