"""A SciVideoBench draft as it moves through the roles, and the per-role stage store.

Identity comes from the draft's own content: `draft_key` hashes the experiment id, the question type
and the generator's question text; the `question_id` is its head and the item's uid is
`video_id/question_id/type`, the id `expvid eval` gives the item. A re-run, another batch or another
experiment changes no uid, letter or file name of this one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from expvid.construction.drafts import DropsAndProblems, Problem
from expvid.construction.recipes.scivideobench.config import QUESTION_TYPES
from expvid.construction.recipes.scivideobench.options import place_options
from expvid.construction.state import write_atomic


def draft_key(video_id: str, question_type: str, question: str) -> str:
    payload = json.dumps([video_id, question_type, " ".join(question.split())], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


class SvbDraft(BaseModel):
    video_id: str
    task: str  # conceptual | hypothetical | quantitative
    draft_key: str
    question: str
    answer: str
    distractors: list[str]
    quantity: dict[str, Any] | None = None  # value, unit, decimals (quantitative)
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    generated_question: str = ""
    evaluation: dict[str, Any] | None = None
    comparison: dict[str, Any] | None = None
    #: The refiner rewrote the (text) distractors: the evaluator is asked again (`recheck`).
    options_rewritten: bool = False
    recheck: dict[str, Any] | None = None
    drafts: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def question_id(self) -> str:
        return self.draft_key[:10]

    @property
    def uid(self) -> str:
        return f"{self.video_id}/{self.question_id}/{self.task}"

    @property
    def question_type(self) -> str:
        return QUESTION_TYPES[self.task]

    def options(self) -> tuple[dict[str, str], str]:
        return place_options(self.uid, self.answer, self.distractors)

    def overlay_suggestions(self) -> list[dict[str, Any]]:
        """Cues the comparer found spoken but not visible: what the verifier may burn onto frames."""
        cues = (self.comparison or {}).get("cues", [])
        return [c for c in cues if not c.get("visible") and c.get("spoken")]


class RoleOutput(DropsAndProblems, BaseModel):
    """What one role produced for one experiment (saved when no unit failed)."""

    video_id: str
    role: str
    fingerprint: str
    value: Any = None
    drafts: list[SvbDraft] = Field(default_factory=list)
    dropped: dict[str, dict[str, int]] = Field(default_factory=dict)
    problems: list[Problem] = Field(default_factory=list)

    def problem(self, message: str, *, failed: bool = True, transient: bool = False) -> None:
        self._add_problem(self.role, message, transient=transient, failed=failed)


class RoleStore:
    """`.build/svb/<video_id>/<role>.json`: a role's finished output, reused while its fingerprint
    (settings, prompt hashes, input content, the previous role's fingerprint) is unchanged."""

    def __init__(self, root: Path, *, read_only: bool = False) -> None:
        self.root = root
        #: `--dry-run` reads saved outputs and never writes one.
        self.read_only = read_only
        self.reused: dict[str, int] = {}
        self.computed: dict[str, int] = {}

    def _path(self, video_id: str, role: str) -> Path:
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in video_id)
        return self.root / safe / f"{role}.json"

    async def run(
        self, video_id: str, role: str, fingerprint: str, compute: Callable[[RoleOutput], Awaitable[None]]
    ) -> RoleOutput:
        path = self._path(video_id, role)
        try:
            saved = RoleOutput.model_validate_json(path.read_text(encoding="utf-8"))
            if saved.fingerprint == fingerprint:
                self.reused[role] = self.reused.get(role, 0) + 1
                return saved
        except (OSError, ValidationError, ValueError):
            pass
        output = RoleOutput(video_id=video_id, role=role, fingerprint=fingerprint)
        await compute(output)
        self.computed[role] = self.computed.get(role, 0) + 1
        if output.complete and not self.read_only:
            write_atomic(path, output.model_dump_json())
        return output


def new_draft(
    video_id: str, task: str, question: str, answer: str, distractors: list[str], **extra: Any
) -> SvbDraft:
    return SvbDraft(
        video_id=video_id,
        task=task,
        draft_key=draft_key(video_id, task, question),
        question=question,
        answer=answer,
        distractors=distractors,
        generated_question=question,
        **extra,
    )


__all__ = ["RoleOutput", "RoleStore", "SvbDraft", "draft_key", "new_draft", "place_options"]
