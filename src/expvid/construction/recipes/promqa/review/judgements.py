"""ProMQA-style verification of procedural QA items: judgements, settlement and adjudication (3.3, B.3).

A procedural item (imported from a ProMQA candidate directory, `procedural_import.py`) is one
generated question with its machine answers. Each of its two annotators judges, as ProMQA's
interface asks: is the question a valid multimodal procedural question; if so, is each answer
correct; and which answers are missing (written answers, one per line, kept with their source).
The judgement is stored as the annotator's `Decision` (verdict approve / reject for the question,
`proposal = {"judge": <the release's judgement>}`), so locking, assignment, the audit trail and the
agreement report work as for every other item.

Settlement follows Table 14 (`expvid.construction.recipes.promqa.verification`): when the two
judgements agree on the question and on every machine answer and nobody wrote an answer, the item
settles at once (verified, or rejected when both reject the question); otherwise it goes to an
adjudicator, who sees the pooled answers shuffled with their sources hidden, decides what the
annotators left open, and may write answers only when one annotator rejected the question. The
adjudication record is stored in the release's shape (`Adjudication.content`), so the export writes
`verification`, `adjudication` and the final fields exactly as `examples.json` holds them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from expvid.construction.recipes.promqa.verification import (
    Judgement,
    VerificationError,
    adjudicator_judgement,
    adjudicator_may_write,
    initial_adjudication,
    needs_adjudication,
    settle,
    verification_record,
)
from expvid.platform.config import InputLimits
from expvid.platform.db.models import Adjudication, Assignment, AuditEvent, Decision, Item, utc_now
from expvid.platform.services import audit, limits
from expvid.platform.services.access import assignment_for, can_adjudicate
from expvid.platform.services.errors import SYSTEM, Actor, Conflict, Forbidden, InvalidInput, NotFound
from expvid.platform.services.settlement import bump, finalize, mark_conflict, require_open

#: `Item.level` of procedural (ProMQA-style) items: they belong to no ExpVid level.
PROCEDURAL_LEVEL = 0
#: Written answers per judgement (the official interface allowed a handful; ten is generous).
MAX_WRITTEN = 10


def is_procedural(item: Item) -> bool:
    return item.level == PROCEDURAL_LEVEL


def generated_pair(record: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The machine question and answers to verify: the kept pair of `generation.qas` (its first), or
    `question` / `answers` without a generation. A verified release record (ProMQA's own) then
    imports as the candidate it was before verification, not with its final, partly human answers."""
    qas = (record.get("generation") or {}).get("qas") if isinstance(record.get("generation"), dict) else None
    if isinstance(qas, list) and qas and isinstance(qas[0], dict) and isinstance(qas[0].get("question"), str):
        answers = qas[0].get("answers")
        if isinstance(answers, list) and answers and all(isinstance(a, str) for a in answers):
            return qas[0]["question"], list(answers)
    answers = record.get("answers")
    return str(record.get("question", "")), [str(a) for a in answers] if isinstance(answers, list) else []


def machine_answers(item: Item) -> list[str]:
    return generated_pair(item.record)[1] if isinstance(item.record, dict) else []


@dataclass(frozen=True)
class JudgementInput:
    question_valid: bool | None
    #: Per machine answer: correct or not (only when the question is valid).
    answers: list[bool | None]
    written: list[str]
    note: str
    item_version: int
    decision_version: int = 0


def _judgement(item: Item, data: JudgementInput) -> Judgement:
    problems: list[str] = []
    if data.question_valid is None:
        problems.append("say whether the question is a valid multimodal procedural question")
    written = [text.strip() for text in data.written if text.strip()]
    n = len(machine_answers(item))
    if data.question_valid:
        missing = [str(i + 1) for i, value in enumerate(data.answers[:n]) if value is None]
        if len(data.answers) < n:
            missing += [str(i + 1) for i in range(len(data.answers), n)]
        if missing:
            problems.append(f"judge answer(s) {', '.join(missing)}")
        if len(written) > MAX_WRITTEN:
            problems.append(f"at most {MAX_WRITTEN} written answers")
    if problems:
        raise InvalidInput(problems)
    if not data.question_valid:
        return Judgement(question=False)
    return Judgement(question=True, answers=[bool(v) for v in data.answers[:n]], comment=written)


def judgement_of(decision: Decision) -> Judgement:
    return Judgement.model_validate((decision.proposal or {})["judge"])


def submit_judgement(
    db: Session,
    actor: Actor,
    item_id: int,
    data: JudgementInput,
    *,
    bounds: InputLimits = limits.DEFAULT_LIMITS,
) -> Decision:
    """Save (or revise) an annotator's judgement; settles the item when both are in."""
    if actor.role != "annotator":
        raise Forbidden("only annotators record review decisions")
    problems = limits.too_long("the note", data.note, bounds.justification)
    for text in data.written:
        problems += limits.too_long("a written answer", text, bounds.justification)
    if problems:
        raise InvalidInput(problems)
    item = db.scalar(select(Item).where(Item.id == item_id).with_for_update())
    if item is None or not is_procedural(item):
        raise NotFound(f"item {item_id} not found")
    assignment = assignment_for(db, actor, item.id)
    if assignment is None:
        raise NotFound(f"item {item_id} not found")
    require_open(item, data.item_version)
    judgement = _judgement(item, data)
    decision = db.scalar(select(Decision).where(Decision.item_id == item.id, Decision.user_id == actor.id))
    if (decision.version if decision else 0) != data.decision_version:
        raise Conflict(
            "you saved a judgement on this item from another page in the meantime; reload before saving again",
            current_version=item.version,
        )
    now = utc_now()
    proposal = {"judge": judgement.release()}
    verdict = "approve" if judgement.question else "reject"
    before = None
    if decision is None:
        opened = assignment.opened_at
        decision = Decision(
            item_id=item.id, user_id=actor.id, verdict=verdict, proposal=proposal,
            justification=data.note.strip(), item_version=item.version, version=1, stale=False,
            seconds_spent=(now - opened).total_seconds() if opened else None, created_at=now, updated_at=now,
        )  # fmt: skip
        db.add(decision)
        db.flush()
        action = "decision.created"
    else:
        before = {"verdict": decision.verdict, "proposal": decision.proposal}
        decision.verdict, decision.proposal = verdict, proposal
        decision.justification = data.note.strip()
        decision.item_version = item.version
        decision.version += 1
        decision.stale = False
        decision.updated_at = now
        action = "decision.updated"
    db.execute(update(Assignment).where(Assignment.id == assignment.id).values(completed_at=now))
    audit.record(
        db, actor, action, entity="decision", entity_id=decision.id, item_id=item.id, before=before,
        after={"verdict": verdict, "proposal": proposal, "item_version": item.version, "version": decision.version},
        reason=decision.justification or None,
    )  # fmt: skip
    settle_if_ready(db, item)
    return decision


def _decisions_by_slot(db: Session, item: Item) -> list[Decision]:
    """The item's live decisions, annotator 1 (slot 1) first: the release's `judges` order."""
    slots = dict(
        db.execute(select(Assignment.user_id, Assignment.slot).where(Assignment.item_id == item.id)).all()
    )
    decisions = db.scalars(select(Decision).where(Decision.item_id == item.id, Decision.stale.is_(False)))
    return sorted(decisions, key=lambda d: (slots.get(d.user_id, 9), d.id))


def verification_of(db: Session, item: Item) -> dict[str, Any] | None:
    """The release's `verification` object, once both judgements are in."""
    decisions = _decisions_by_slot(db, item)
    if len(decisions) < 2:
        return None
    judges = [judgement_of(d) for d in decisions[:2]]
    return verification_record(item.question, machine_answers(item), judges)


def pooled_adjudication(db: Session, item: Item) -> dict[str, Any] | None:
    """The release's `adjudication` object before the adjudicator (answers shuffled, `init`)."""
    verification = verification_of(db, item)
    return None if verification is None else initial_adjudication(verification, key=item.key)


def settle_if_ready(db: Session, item: Item) -> None:
    adjudication = pooled_adjudication(db, item)
    if adjudication is None:
        return
    if needs_adjudication(adjudication):
        why = "the annotators disagree" if adjudication["init"]["question"] is None or any(
            v is None for v, tag in zip(adjudication["init"]["answers"], adjudication["answer_tags"], strict=True)
            if tag == "machine"
        ) else "answers were written"  # fmt: skip
        mark_conflict(db, SYSTEM, item, reason=f"two judgements: {why} (Table 14: the adjudicator decides)")
        return
    outcome = settle(adjudication)
    _apply(
        db,
        SYSTEM,
        item,
        outcome.approved,
        outcome.fields,
        via="agreement",
        reason=f"two annotators: {outcome.reason}",
    )


def _apply(db: Session, actor: Actor, item: Item, approved: bool, fields: Mapping[str, Any], *, via: str,
           reason: str) -> None:  # fmt: skip
    if approved and fields["answers"] != item.answer:
        audit.record(
            db, actor, "item.edited", entity="item", entity_id=item.id, item_id=item.id,
            before={"answer": item.answer}, after={"answer": fields["answers"]}, reason=reason,
        )  # fmt: skip
        item.answer = list(fields["answers"])
        bump(item)
    finalize(db, actor, item, "verified" if approved else "rejected", via=via, reason=reason)


# -- adjudication -------------------------------------------------------------------------------------


@dataclass
class PooledAnswer:
    position: int
    text: str
    #: The majority's call (True / False), or None: open, the adjudicator decides.
    decided: bool | None


@dataclass
class ProceduralAdjudicationView:
    item_version: int
    question: str
    #: The annotators' call on the question, or None when they disagree.
    question_decided: bool | None
    answers: list[PooledAnswer] = field(default_factory=list)
    may_write: bool = False
    #: The annotators' notes (anonymous, in slot order).
    notes: list[str] = field(default_factory=list)


def _load(db: Session, actor: Actor, item_id: int, *, lock: bool) -> Item:
    if actor.role not in ("adjudicator", "admin"):
        raise Forbidden("only adjudicators and admins resolve conflicts")
    query = select(Item).where(Item.id == item_id)
    item = db.scalar(query.with_for_update() if lock else query)
    if item is None or not is_procedural(item) or not can_adjudicate(actor, item):
        raise NotFound(f"item {item_id} not found")
    return item


def adjudication_view(db: Session, actor: Actor, item_id: int) -> ProceduralAdjudicationView:
    item = _load(db, actor, item_id, lock=False)
    pooled = pooled_adjudication(db, item)
    if pooled is None:
        raise Conflict("this item does not have two judgements yet", current_version=item.version)
    init = pooled["init"]
    return ProceduralAdjudicationView(
        item_version=item.version,
        question=pooled["question"],
        question_decided=init["question"],
        answers=[
            PooledAnswer(i, text, value)
            for i, (text, value) in enumerate(zip(pooled["answers"], init["answers"], strict=True))
        ],
        may_write=adjudicator_may_write(pooled),
        notes=[d.justification for d in _decisions_by_slot(db, item) if d.justification],
    )


@dataclass(frozen=True)
class ProceduralResolution:
    question_valid: bool | None
    answers: dict[int, bool]
    written: list[str]
    justification: str
    item_version: int


def resolve(
    db: Session,
    actor: Actor,
    item_id: int,
    data: ProceduralResolution,
    *,
    bounds: InputLimits = limits.DEFAULT_LIMITS,
) -> Item:
    """The adjudicator's judgement over the pooled answers; settles the item (Table 14)."""
    problems = limits.too_long("the justification", data.justification, bounds.justification)
    for text in data.written:
        problems += limits.too_long("a written answer", text, bounds.justification)
    if problems:
        raise InvalidInput(problems)
    item = _load(db, actor, item_id, lock=True)
    if item.version != data.item_version:
        raise Conflict(
            f"the item changed since you opened it (version {data.item_version} -> {item.version}); reload",
            current_version=item.version,
        )
    pooled = pooled_adjudication(db, item)
    if pooled is None:
        raise Conflict("this item does not have two judgements yet", current_version=item.version)
    try:
        judge = adjudicator_judgement(
            pooled, question=data.question_valid, answers=data.answers, comment=data.written
        )
    except VerificationError as error:
        raise InvalidInput([str(error)]) from None
    record = {**pooled, "judge": judge.release()}
    outcome = settle(record)
    justification = data.justification.strip()
    db.add(
        Adjudication(
            item_id=item.id, user_id=actor.id, outcome="verified" if outcome.approved else "rejected",
            content={"adjudication": record, "final": outcome.fields, "reason": outcome.reason},
            matched_decisions=[], justification=justification, item_version=item.version, created_at=utc_now(),
            own_edit=bool(judge.comment),
        )
    )  # fmt: skip
    _apply(db, actor, item, outcome.approved, outcome.fields, via="adjudication",
           reason=justification or f"adjudication: {outcome.reason}")  # fmt: skip
    audit.record(
        db, actor, "adjudication.recorded", entity="item", entity_id=item.id, item_id=item.id,
        after={"outcome": "verified" if outcome.approved else "rejected", "judge": judge.release()},
        reason=justification or None,
    )  # fmt: skip
    return item


def mark_adjudication_opened(db: Session, actor: Actor, item_id: int) -> None:
    """The first time an adjudicator opens an item (the start of its adjudication time, Table 5)."""
    opened = db.scalar(
        select(AuditEvent.id).where(AuditEvent.item_id == item_id, AuditEvent.action == "adjudication.opened")
    )
    if opened is None and actor.role == "adjudicator":
        audit.record(db, actor, "adjudication.opened", entity="item", entity_id=item_id, item_id=item_id)
