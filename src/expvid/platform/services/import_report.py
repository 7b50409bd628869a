"""What one import did to each item, for people (printed) and for scripts (JSON).

Every item the directory holds, and every item on the platform the directory no longer holds, gets
exactly one outcome, so nothing is dropped silently:

- `added`: new on the platform (sent to two annotators);
- `unchanged`: same content as on the platform (its media and provenance follow the new directory);
- `changed`: new content upstream: the item becomes a new version and goes back to review, earlier
  decisions kept in its history (marked stale);
- `restored`: it had been removed upstream and is back, unchanged (`changed` if it is back changed);
- `removed`: its experiment is in the directory but the item is not (re-drafted away, or the
  experiment excluded): flagged `removed_upstream` and withdrawn from review, never deleted;
- `conflict`: not applied, with the reason (the identity now names another experiment or task, or
  reviewers corrected the step list the new draft was made from); the import exits non-zero.

Bad lines are reported by file and line (`problems`); nothing is imported while there are any
unless `skip_bad`. A refused import has a report too (`refused` says why, `exit_code` is 1), so a
script reading `--json` or `--report FILE` always finds the problems there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.platform.services.assignment import AssignmentReport
from expvid.schema import RecordProblem

OUTCOMES = ("added", "unchanged", "changed", "restored", "removed", "conflict")
REPORT_FORMAT = "expvid-platform-import/1"


@dataclass
class ItemOutcome:
    key: str
    release_key: str
    task: str
    video_id: str
    outcome: str
    item_id: int | None = None
    #: Why (changed, removed, conflict), in one line.
    reason: str = ""
    #: The item's state on the platform after the import.
    state: str | None = None
    #: Decisions marked stale because the item changed (kept in its history).
    stale_decisions: int = 0
    upstream_version: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key, "release_key": self.release_key, "task": self.task, "video_id": self.video_id,
            "outcome": self.outcome, "item_id": self.item_id, "reason": self.reason, "state": self.state,
            "stale_decisions": self.stale_decisions, "upstream_version": self.upstream_version,
        }  # fmt: skip


@dataclass
class ImportReport:
    root: Path
    batch_id: int | None = None
    namespace: str = ""
    #: "uid" (the directory names every item's identity), "directory" (none: keyed per directory),
    #: or "mixed".
    identity: str = "uid"
    items: list[ItemOutcome] = field(default_factory=list)
    problems: list[RecordProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    experiments: int = 0
    experiments_updated: int = 0
    segments: int = 0
    segments_updated: int = 0
    assignment: AssignmentReport | None = None
    #: Why nothing was imported (bad lines, not a candidate directory, a database error), if so.
    refused: str | None = None

    def of(self, outcome: str) -> list[ItemOutcome]:
        return [i for i in self.items if i.outcome == outcome]

    @property
    def counts(self) -> dict[str, int]:
        seen = Counter(i.outcome for i in self.items)
        return {outcome: seen.get(outcome, 0) for outcome in OUTCOMES}

    @property
    def imported(self) -> Counter[str]:
        """New items per task."""
        return Counter(i.task for i in self.items if i.outcome == "added")

    @property
    def total_imported(self) -> int:
        return self.counts["added"]

    @property
    def unchanged(self) -> int:
        return self.counts["unchanged"]

    @property
    def changed_upstream(self) -> list[str]:
        return [i.release_key for i in self.items if i.outcome == "changed"]

    @property
    def conflicts(self) -> list[ItemOutcome]:
        return self.of("conflict")

    @property
    def exit_code(self) -> int:
        """0; 1 when nothing was imported (`refused`); 3 when some items were not applied
        (conflicts): a script must look."""
        if self.refused is not None:
            return 1
        return 3 if self.conflicts else 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT,
            "imported": self.refused is None,
            "refused": self.refused,
            "root": str(self.root),
            "batch": self.batch_id,
            "identity": self.identity,
            "namespace": self.namespace,
            "counts": self.counts,
            "by_task": {
                task: dict(Counter(i.outcome for i in self.items if i.task == task))
                for task in sorted({i.task for i in self.items})
            },
            "items": [i.as_dict() for i in self.items],
            "problems": [str(p) for p in self.problems],
            "warnings": self.warnings,
            "experiments": {"added": self.experiments, "updated": self.experiments_updated},
            "segments": {"added": self.segments, "updated": self.segments_updated},
            "assignment": None
            if self.assignment is None
            else {
                "assignments_created": self.assignment.assignments_created,
                "items_fully_assigned": self.assignment.items_fully_assigned,
                "short_of_annotators": self.assignment.short_of_annotators,
            },
            "exit_code": self.exit_code,
        }

    def summary(self) -> dict[str, Any]:
        """What the import batch row keeps: the counts, and the outcome of every item that was not
        simply added or unchanged (the audit trail has an event for each added item)."""
        data = self.as_dict()
        data["items"] = [i.as_dict() for i in self.items if i.outcome not in ("added", "unchanged")]
        return data
