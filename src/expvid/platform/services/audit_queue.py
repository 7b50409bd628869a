"""The re-review queue: a validity audit (`expvid audit`'s `audit.json`) applied to imported items.

`apply_audit` reads an `audit.json` (the contract of `expvid.audit.result`), matches its items with
the platform's and records, for each flagged one, an `AuditFinding`: the flags, the audit's reasons,
and for each flag what it is (the solver's description and its accuracy against chance on the
item's task, or the item check's meaning). A flagged item that was already settled (verified or
rejected) goes back to its annotators (`settlement.reopen_for_review`: their decisions become stale);
one still open simply carries the finding into its review. The audit file is kept once per content
(`AuditFile.sha256`), so applying the same audit again changes nothing.

An item is *in the queue* while it has a finding and has not been settled since at the upstream
version that was flagged: a verdict (approve, edit, reject; an adjudication) recorded like any other
takes it out, and the export, which writes verified items only, follows that verdict.

Matching is by the audit's item id, whatever the suite: a suite's id may be the platform's
`<task>/<id>`, the record's own id, or that id with the task before or after it (`<task>/<id>`,
`<id>/<task>`); ids that match no item are reported. When the audit names the directory it audited
(`data`) and items were imported from there, only those items are matched.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from expvid.audit.result import CHECKS, AuditReport, SolverResult, read_audit
from expvid.platform.db.engine import Database
from expvid.platform.db.models import AuditFile, AuditFinding, ImportBatch, Item, utc_now
from expvid.platform.services import audit as trail
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.settlement import reopen_for_review

#: States an item is still open for a verdict in (the queue); settled and removed items are out.
QUEUE_STATES = ("pending", "in_review", "conflict")
SETTLED_STATES = ("verified", "rejected")
#: Unmatched ids printed on one line at most (the rest are counted).
SHOWN_UNMATCHED = 20


@dataclass
class AuditApplication:
    """What applying one audit did (printed by `expvid platform audit` and `import`)."""

    source: str
    sha256: str
    #: False when this audit (same content) had been applied before: nothing changed.
    new: bool
    audit_items: int = 0
    flagged: int = 0
    #: Flagged audit items that matched a platform item (findings recorded now or before).
    matched: int = 0
    findings_added: int = 0
    #: Settled items sent back to their annotators by this application.
    reopened: int = 0
    #: Audit ids (flagged or not) that match no item on the platform.
    unmatched: list[str] = field(default_factory=list)
    #: Audit ids that match several items (all of them were flagged).
    ambiguous: list[str] = field(default_factory=list)
    scope: str = "every item on the platform"

    @property
    def exit_code(self) -> int:
        """0: applied; 2: no id of the audit matches an item (nothing could be applied)."""
        return 2 if self.audit_items and len(self.unmatched) == self.audit_items else 0

    def unmatched_line(self) -> str:
        shown = ", ".join(self.unmatched[:SHOWN_UNMATCHED])
        more = len(self.unmatched) - SHOWN_UNMATCHED
        return f"{len(self.unmatched)} audit id(s) match no item: {shown}" + (
            f" (+{more} more)" if more > 0 else ""
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "sha256": self.sha256, "new": self.new, "scope": self.scope,
            "audit_items": self.audit_items, "flagged": self.flagged, "matched": self.matched,
            "findings_added": self.findings_added, "reopened": self.reopened,
            "unmatched": self.unmatched, "ambiguous": self.ambiguous,
        }  # fmt: skip


def local_id(item_id: str, task: str) -> str:
    """An id with its task taken off either end (`<task>/<id>`, `<id>/<task>`): the record's own id."""
    if item_id.startswith(task + "/"):
        return item_id[len(task) + 1 :]
    if item_id.endswith("/" + task):
        return item_id[: -len(task) - 1]
    return item_id


def _platform_ids(item: Item) -> set[tuple[str, str]]:
    """(task, id) pairs an audit may name this item by."""
    own = item.record.get("id") if isinstance(item.record, dict) else None
    ids = {local_id(item.release_key, item.task)}
    if isinstance(own, str | int) and not isinstance(own, bool):
        ids.add(str(own))
    return {(item.task, value) for value in ids}


def _solver_detail(solver: SolverResult) -> dict[str, Any]:
    return {
        "kind": "solver", "description": solver.description or solver.family, "accuracy": solver.accuracy,
        "chance": solver.chance, "ci_low": solver.ci_low, "ci_high": solver.ci_high, "n": solver.n,
        "task": solver.task, "flagged": solver.flagged,
    }  # fmt: skip


def flag_details(
    report: AuditReport, task: str, flags: list[str], reasons: dict[str, str]
) -> list[dict[str, Any]]:
    """Per flag: its name, the audit's reason, and what it is (solver on this task, or item check)."""
    solvers = {(s.name, s.task): s for s in report.solvers}
    details = []
    for flag in flags:
        detail: dict[str, Any] = {"flag": flag, "reason": reasons.get(flag, "")}
        solver = solvers.get((flag, task))
        if solver is not None:
            detail.update(_solver_detail(solver))
        else:
            detail.update(kind="check", description=CHECKS.get(flag, ""))
        details.append(detail)
    return details


def _scope(db: Session, report: AuditReport, root: Path | None) -> tuple[list[Item], str]:
    """Items the audit's ids are matched against: those imported from `root` (else the directory the
    audit names), when there are any; else every item not removed upstream."""
    items = list(db.scalars(select(Item).where(Item.state != "removed")))
    where = root if root is not None else (Path(report.data).expanduser() if report.data else None)
    if where is not None:
        root = where.resolve()
        batches = set(db.scalars(select(ImportBatch.id).where(ImportBatch.root == str(root))))
        scoped = [item for item in items if item.batch_id in batches]
        if scoped:
            return scoped, f"items imported from {root}"
    return items, "every item on the platform (removed upstream excluded)"


def _applied_before(db: Session, digest: str) -> AuditFile | None:
    return db.scalar(select(AuditFile).where(AuditFile.sha256 == digest))


def apply_audit(
    database: Database, path: Path, *, actor: Actor = SYSTEM, root: Path | None = None
) -> AuditApplication:
    """Apply `path` (an audit.json, or a folder holding one) to the items imported from `root` (by
    default the directory the audit names, else every item); `DataError` naming the file if it is
    not an audit. One write transaction."""
    file = path / "audit.json" if path.is_dir() else path
    report = read_audit(file)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    result = AuditApplication(source=str(file), sha256=digest, new=True, audit_items=len(report.items))
    result.flagged = sum(1 for entry in report.items if entry.flags)
    with database.write() as db:
        items, result.scope = _scope(db, report, root)
        by_id: dict[tuple[str, str], list[Item]] = {}
        for item in items:
            for pair in _platform_ids(item):
                by_id.setdefault(pair, []).append(item)
        matches = {
            entry.id: by_id.get((entry.task, local_id(entry.id, entry.task)), []) for entry in report.items
        }
        result.unmatched = [entry.id for entry in report.items if not matches[entry.id]]
        result.ambiguous = [key for key, found in matches.items() if len(found) > 1]
        result.matched = sum(1 for entry in report.items if entry.flags and matches[entry.id])
        existing = _applied_before(db, digest)
        if existing is not None:
            result.new = False
            return result
        record = AuditFile(
            sha256=digest, source=str(file), data=report.data, suite=report.suite, applied_at=utc_now(),
            applied_by=actor.name, solvers=[s.model_dump(mode="json") for s in report.solvers], summary={},
        )  # fmt: skip
        db.add(record)
        db.flush()
        for entry in report.items:
            if not entry.flags:
                continue
            for item in matches[entry.id]:
                _flag_item(db, actor, record, report, item, entry.id, entry.flags, entry.reasons, result)
        record.summary = {
            key: value for key, value in result.as_dict().items() if key not in ("source", "sha256")
        }
        trail.record(
            db, actor, "audit.applied", entity="audit_file", entity_id=record.id,
            after={"sha256": digest, "source": str(file), "suite": report.suite, "data": report.data,
                   "findings": result.findings_added, "reopened": result.reopened,
                   "unmatched": len(result.unmatched)},
            reason=f"validity audit {file} applied",
        )  # fmt: skip
    return result


#: How the audit says that a solver picked the item's key (`expvid.audit.engine`).
PICKS_KEY = "picks the correct option"


def _with_picks(item: Item, details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where the audit says a solver picked the correct option, which option that was (the item's key
    when it was flagged), so that the reviewer sees what the shortcut found."""
    options, answer = item.options, item.answer
    if not isinstance(options, dict) or not isinstance(answer, str) or answer not in options:
        return details
    for detail in details:
        if detail.get("kind") == "solver" and PICKS_KEY in detail["reason"]:
            detail["picked"] = f"{answer}. {options[answer]}"
    return details


def _flag_item(
    db: Session, actor: Actor, record: AuditFile, report: AuditReport, item: Item, audit_id: str,
    flags: list[str], reasons: dict[str, str], result: AuditApplication,
) -> None:  # fmt: skip
    finding = AuditFinding(
        item_id=item.id, audit_file_id=record.id, audit_item_id=audit_id, flags=list(flags),
        reasons=dict(reasons), details=_with_picks(item, flag_details(report, item.task, flags, reasons)),
        state_before=item.state, upstream_version=item.upstream_version, created_at=utc_now(),
    )  # fmt: skip
    db.add(finding)
    result.findings_added += 1
    why = f"flagged by validity audit {record.sha256[:12]}: " + "; ".join(flags)
    trail.record(
        db, actor, "item.audit_flagged", entity="item", entity_id=item.id, item_id=item.id,
        before={"state": item.state}, after={"audit": record.sha256, "flags": list(flags), "reasons": dict(reasons)},
        reason=why,
    )  # fmt: skip
    if item.state in SETTLED_STATES:
        reopen_for_review(db, actor, item, reason=why + " (back to re-review)")
        result.reopened += 1


def _open_finding_filter() -> Any:
    return (Item.state.in_(QUEUE_STATES)) & (Item.upstream_version == AuditFinding.upstream_version)


def queued_item_ids(db: Session) -> set[int]:
    """Items in the re-review queue: flagged by an audit and not settled since, at that version."""
    return set(
        db.scalars(
            select(AuditFinding.item_id)
            .join(Item, Item.id == AuditFinding.item_id)
            .where(_open_finding_filter())
        )
    )


def findings_of(db: Session, item_id: int) -> list[AuditFinding]:
    """An item's findings, newest audit first (shown on its review and adjudication pages)."""
    return list(
        db.scalars(
            select(AuditFinding).where(AuditFinding.item_id == item_id).order_by(AuditFinding.id.desc())
        )
    )


def in_queue(db: Session, item: Item) -> bool:
    return item.state in QUEUE_STATES and any(
        finding.upstream_version == item.upstream_version for finding in findings_of(db, item.id)
    )


@dataclass
class QueueCounts:
    """The queue's figures, each with the population it covers (`expvid platform status`)."""

    audits: int
    flagged_items: int
    in_queue: int
    settled_since: int
    #: Flagged items removed upstream since (out of the queue, not settled).
    removed: int
    by_flag: dict[str, int]
    by_state: dict[str, int]

    def lines(self) -> list[str]:
        if not self.audits:
            return ["re-review queue: no validity audit applied (`expvid platform audit AUDIT.json`)"]
        flags = ", ".join(
            f"{name} {n}" for name, n in sorted(self.by_flag.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        states = ", ".join(f"{state} {n}" for state, n in sorted(self.by_state.items()))
        return [
            f"re-review queue: {self.in_queue} item(s) to decide, of {self.flagged_items} item(s) flagged by "
            f"{self.audits} applied audit(s); {self.settled_since} settled since they were flagged"
            + (f", {self.removed} removed upstream" if self.removed else ""),
            f"  in the queue, by state: {states or 'none'}; by flag: {flags or 'none'}",
        ]


def queue_counts(db: Session) -> QueueCounts:
    audits = int(db.scalar(select(func.count(AuditFile.id))) or 0)
    rows = db.execute(
        select(AuditFinding, Item.state, Item.upstream_version).join(Item, Item.id == AuditFinding.item_id)
    ).all()
    flagged = {finding.item_id for finding, _, _ in rows}
    open_rows = [(f, s) for f, s, version in rows if s in QUEUE_STATES and version == f.upstream_version]
    queued = {finding.item_id: state for finding, state in open_rows}
    names: dict[int, set[str]] = {}
    for finding, _ in open_rows:
        names.setdefault(finding.item_id, set()).update(finding.flags)
    by_flag: Counter[str] = Counter(name for flags in names.values() for name in flags)
    settled = {finding.item_id for finding, state, _ in rows if state in SETTLED_STATES} - set(queued)
    removed = {finding.item_id for finding, state, _ in rows if state == "removed"}
    return QueueCounts(
        audits=audits, flagged_items=len(flagged), in_queue=len(queued), settled_since=len(settled),
        removed=len(removed),
        by_flag=dict(by_flag), by_state=dict(Counter(queued.values())),
    )  # fmt: skip
