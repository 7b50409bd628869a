"""What the stages produce, as plain data that survives a restart: clip specs, item drafts, segments.

Stages store these as JSON in the build state (`.build/stages/<video_id>/<stage>.json`), so a re-run
rebuilds the output without redoing a finished stage. An item draft still has its correct option and
distractors apart, and carries its `draft_key` (what it asks about, from the source content): its id,
answer letter and option order are drawn from that key at write time (`writer.py`), so they never
depend on other items.

Clip names are content addresses (`clip_<hash>.mp4`, the hash of the source video's bytes and the
spans): nothing in a name says which step was removed or which step comes next, a re-run finds the
clip it already cut, and `touch` or a copy to another machine renames nothing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from expvid.schema import OPTION_LETTERS


class ClipSpec(BaseModel):
    """A clip to cut from an experiment's source video: [start, end) minus `remove` (seconds)."""

    model_config = ConfigDict(frozen=True)

    level: int
    video_id: str
    start: float
    end: float
    remove: tuple[tuple[float, float], ...] = ()
    #: sha256 of the source video's bytes (`digests.py`): a changed source never reuses an old clip, and a
    #: touched or copied one keeps every clip name.
    source_digest: str = ""
    #: Level 3: the whole source is used as is (copied), no re-encoding; `suffix` keeps its container.
    whole: bool = False
    suffix: str = ".mp4"

    @property
    def key(self) -> str:
        payload = json.dumps(
            [self.video_id, round(self.start, 4), round(self.end, 4), [list(r) for r in self.remove],
             self.source_digest, self.whole],
            separators=(",", ":"),
        )  # fmt: skip
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    @property
    def path(self) -> str:
        """Path relative to the candidate directory."""
        if self.level == 3:
            return f"videos/level_3/{self.video_id}{self.suffix}"
        return f"videos/level_{self.level}/{self.video_id}/clip_{self.key}.mp4"

    @property
    def duration(self) -> float:
        return self.end - self.start - sum(b - a for a, b in self.remove)

    def source_record(self, source_video: str) -> dict[str, Any]:
        """The `source` object of a provenance line."""
        record: dict[str, Any] = {
            "video": source_video,
            "start": round(self.start, 3),
            "end": round(self.end, 3),
        }
        if self.remove:
            record["removed"] = [[round(a, 3), round(b, 3)] for a, b in self.remove]
        return record


class DraftItem(BaseModel):
    """One candidate item before ids and (for balanced MCQs) option letters are assigned."""

    task: str
    video_id: str
    #: What the item asks about, from the source content only (docs/build.md, "Item identity"):
    #: `<task>|<sentence span>|<target>` (Level 1), `<task>|<segment span>` (Level 2),
    #: `<task>|<sentence>` (Level 3). The item's id, letter and option order are functions of it.
    draft_key: str = ""
    category: str
    question: str
    asr_caption: str
    clip: ClipSpec
    #: Balanced MCQs: the correct text and three distractors (letters assigned at write time).
    correct: str | None = None
    distractors: list[str] | None = None
    #: Everything else: fixed options (completeness verification) and the answer as the release writes it.
    options: dict[str, str] | None = None
    answer: Any = None
    drafts: list[dict[str, Any]] = Field(default_factory=list)
    flags: list[dict[str, Any]] = Field(default_factory=list)
    segment_id: str | None = None
    #: Sort key inside the experiment (time of the clip, then creation order).
    order: tuple[float, int] = (0.0, 0)
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def balanced(self) -> bool:
        return self.correct is not None

    def with_letters(self, position: int, distractor_order: list[int]) -> DraftItem:
        """The item with options A-D: distractors in `distractor_order`, the correct one at `position`."""
        assert self.correct is not None and self.distractors is not None
        texts = [self.distractors[i] for i in distractor_order]
        texts.insert(position, self.correct)
        options = dict(zip(OPTION_LETTERS, texts, strict=False))
        return self.model_copy(update={"options": options, "answer": OPTION_LETTERS[position]})


class SegmentStep(BaseModel):
    number: int
    text: str
    start: float | None = None
    end: float | None = None


class SegmentRecord(BaseModel):
    """A line of `segments.jsonl` (the item keys are filled in at write time)."""

    segment_id: str
    video_id: str
    clip: ClipSpec
    title: str = ""
    description: str = ""
    steps: list[SegmentStep]
    full_step_list: list[str] = Field(default_factory=list)


class Problem(BaseModel):
    """Something that went wrong and was skipped; listed in the build report."""

    video_id: str | None
    stage: str
    message: str
    transient: bool = False
    #: A unit (a model call, a clip) that produced nothing usable: the stage is not saved, the next run
    #: retries it (with a fresh request, see `retries.py`), and `expvid build` exits non-zero.
    failed: bool = False


class _Tallied(Protocol):
    video_id: str
    dropped: dict[str, dict[str, int]]
    problems: list[Problem]


class DropsAndProblems:
    """Drafts dropped by reason and problems met, for an output model (a stage's, a recipe role's)
    that declares the fields `video_id`, `dropped` and `problems` itself (so that they keep their
    place in its saved JSON)."""

    def drop(self: _Tallied, task: str, reason: str, count: int = 1) -> None:
        reasons = self.dropped.setdefault(task, {})
        reasons[reason] = reasons.get(reason, 0) + count

    def _add_problem(self: _Tallied, stage: str, message: str, *, transient: bool, failed: bool) -> None:
        self.problems.append(
            Problem(video_id=self.video_id, stage=stage, message=message, transient=transient, failed=failed)
        )

    @property
    def complete(self: _Tallied) -> bool:
        """False when a unit failed (a backend error, no usable reply, a clip that could not be cut):
        such an output is not saved and is made again next time (its answered calls come from the cache)."""
        return not any(p.transient or p.failed for p in self.problems)


class StageOutput(DropsAndProblems, BaseModel):
    """Everything one stage produced for one experiment."""

    video_id: str
    stage: str
    fingerprint: str = ""
    items: list[DraftItem] = Field(default_factory=list)
    segments: list[SegmentRecord] = Field(default_factory=list)
    paper_markdown: str | None = None
    level3_clip: ClipSpec | None = None
    #: task -> reason -> count of drafts dropped before becoming items.
    dropped: dict[str, dict[str, int]] = Field(default_factory=dict)
    problems: list[Problem] = Field(default_factory=list)
    notes: dict[str, Any] = Field(default_factory=dict)

    def problem(self, message: str, *, transient: bool = False, failed: bool = False) -> None:
        self._add_problem(self.stage, message, transient=transient, failed=failed)


def span_key(start: float, end: float) -> str:
    """A time span as draft keys write it (seconds, 3 decimals)."""
    return f"{start:.3f}-{end:.3f}"


def segment_id(video_id: str, start: float, end: float) -> str:
    """`<video_id>/seg-<hash of the segment's narration span>`: the same segment in every build."""
    digest = hashlib.sha256(f"segment|{span_key(start, end)}".encode()).hexdigest()[:8]
    return f"{video_id}/seg-{digest}"
