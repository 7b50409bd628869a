"""Progress and agreement figures for the dashboard and the export.

Time per item runs from the annotator's first opening of the item to their first saved decision;
the median is reported next to the mean because an item left open overnight skews the mean (the
paper reports 6-8 minutes per Level-1 question, about 13 for Level-2 and 18 for Level-3).
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from expvid.platform.db.models import Assignment, Decision, Item, User, utc_now
from expvid.platform.services.agreement import Agreement, agreement
from expvid.platform.services.tasks import TASKS

#: `removed`: removed upstream by a later import (kept, out of review and export; services/upstream.py).
STATES = ("pending", "in_review", "conflict", "verified", "rejected", "removed")
#: States in which an annotator can still do the work assigned to them.
OPEN_STATES = ("pending", "in_review")
PAPER_MINUTES = {1: "6-8", 2: "13", 3: "18"}


@dataclass
class AnnotatorStats:
    username: str
    #: Deactivated annotators are listed for their past work; they have nothing open.
    active: bool = True
    assigned: int = 0
    #: Work that can still be done: assignments not completed, on items still open for review
    #: (an item verified, rejected, in conflict or removed upstream is no one's open work).
    open: int = 0
    decided: int = 0
    decided_last_24h: int = 0
    median_minutes: float | None = None
    mean_minutes: float | None = None
    median_minutes_by_level: dict[int, float] = field(default_factory=dict)


@dataclass
class Progress:
    by_group: list[dict[str, Any]]  # {"discipline", "task", states..., "total"}
    totals: dict[str, int]
    items_left: int
    annotators: list[AnnotatorStats]
    median_minutes_by_level: dict[int, float]


def progress(db: Session) -> Progress:
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for discipline, task, state, n in db.execute(
        select(Item.discipline, Item.task, Item.state, func.count()).group_by(
            Item.discipline, Item.task, Item.state
        )
    ):
        counts[(discipline, task)][state] += n
    task_order = {name: i for i, name in enumerate(TASKS)}
    groups = []
    totals: Counter[str] = Counter()
    for (discipline, task), states in sorted(
        counts.items(), key=lambda kv: (kv[0][0], task_order.get(kv[0][1], 99))
    ):
        row: dict[str, Any] = {"discipline": discipline, "task": task, "total": sum(states.values())}
        row.update({state: states.get(state, 0) for state in STATES})
        groups.append(row)
        totals.update(states)
    items_left = sum(totals.get(state, 0) for state in ("pending", "in_review", "conflict"))

    annotators = db.scalars(select(User).where(User.role == "annotator"))
    stats = {u.id: AnnotatorStats(username=u.username, active=u.active) for u in annotators}
    still_open = Assignment.completed_at.is_(None) & Item.state.in_(OPEN_STATES)
    for user_id, total, open_now in db.execute(
        select(Assignment.user_id, func.count(), func.count().filter(still_open))
        .join(Item, Item.id == Assignment.item_id)
        .group_by(Assignment.user_id)
    ):
        if user_id in stats:
            stats[user_id].assigned = total
            stats[user_id].open = open_now if stats[user_id].active else 0
    since = utc_now() - timedelta(hours=24)
    minutes: dict[int, list[float]] = defaultdict(list)
    minutes_by_level: dict[tuple[int, int], list[float]] = defaultdict(list)
    all_by_level: dict[int, list[float]] = defaultdict(list)
    for user_id, seconds, created, level in db.execute(
        select(Decision.user_id, Decision.seconds_spent, Decision.created_at, Item.level)
        .join(Item, Item.id == Decision.item_id)
        .where(Decision.stale.is_(False))
    ):
        if user_id not in stats:
            continue
        stats[user_id].decided += 1
        if created >= since:
            stats[user_id].decided_last_24h += 1
        if seconds is not None:
            minutes[user_id].append(seconds / 60.0)
            minutes_by_level[(user_id, level)].append(seconds / 60.0)
            all_by_level[level].append(seconds / 60.0)
    for user_id, values in minutes.items():
        stats[user_id].median_minutes = statistics.median(values)
        stats[user_id].mean_minutes = statistics.fmean(values)
    for (user_id, level), values in minutes_by_level.items():
        stats[user_id].median_minutes_by_level[level] = statistics.median(values)
    return Progress(
        by_group=groups,
        totals={state: totals.get(state, 0) for state in STATES},
        items_left=items_left,
        annotators=sorted(stats.values(), key=lambda s: s.username),
        median_minutes_by_level={level: statistics.median(v) for level, v in sorted(all_by_level.items())},
    )


@dataclass
class AgreementReport:
    overall: Agreement
    by_task: dict[str, Agreement]
    by_pair: dict[tuple[str, str], Agreement]
    by_task_and_pair: dict[tuple[str, str, str], Agreement]
    #: The items the figures cover, by state (every item with all the judgements it needs).
    population: dict[str, int] = field(default_factory=dict)
    #: Items left out, by reason.
    left_out: dict[str, int] = field(default_factory=dict)
    #: What the population is, in words (`scope` of `agreement_report`).
    scope: str = "items under review"

    def covers(self) -> str:
        """One sentence naming the population, for every place the figures are shown."""
        states = ", ".join(f"{n} {state.replace('_', ' ')}" for state, n in self.population.items() if n)
        text = f"{self.overall.n} {self.scope} with all their current judgements" + (
            f" ({states})" if states else ""
        )
        left = "; ".join(f"{n} {why}" for why, n in self.left_out.items() if n)
        return text + (f"; not counted: {left}" if left else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "categories": ["approve", "edit", "reject"],
            "covers": self.covers(),
            "population": self.population,
            "left_out": self.left_out,
            "overall": self.overall.as_dict(),
            "by_task": {task: a.as_dict() for task, a in self.by_task.items()},
            "by_pair": [{"annotators": list(pair), **a.as_dict()} for pair, a in self.by_pair.items()],
            "by_task_and_pair": [
                {"task": task, "annotators": [u1, u2], **a.as_dict()}
                for (task, u1, u2), a in self.by_task_and_pair.items()
            ],
        }


#: Why an item with judgements is not counted.
REMOVED_UPSTREAM = "removed upstream (their experiment excluded or re-drafted)"
INCOMPLETE = "still waiting for judgements"
SINGLE = "judged by one annotator by design (no agreement to measure)"


def agreement_report(
    db: Session, *, task: str | None = None, item_ids: set[int] | None = None, scope: str | None = None
) -> AgreementReport:
    """Agreement over the items that have all the current judgements they need (two or more;
    stale ones excluded), leaving out items removed upstream. `item_ids` narrows the population
    (e.g. the items of a release); `scope` names it."""
    rows = db.execute(
        select(Decision.item_id, Item.task, Item.state, Item.annotators_required, User.username,
               Assignment.slot, Decision.verdict)
        .join(Item, Item.id == Decision.item_id)
        .join(User, User.id == Decision.user_id)
        .outerjoin(Assignment, (Assignment.item_id == Decision.item_id) & (Assignment.user_id == Decision.user_id))
        .where(Decision.stale.is_(False))
        .order_by(Decision.item_id, Assignment.slot, Decision.id)
    ).all()  # fmt: skip
    per_item: dict[int, list[tuple[str, str]]] = defaultdict(list)
    info: dict[int, tuple[str, str, int]] = {}
    for item_id, item_task, state, required, username, _slot, verdict in rows:
        if (task is None or item_task == task) and (item_ids is None or item_id in item_ids):
            per_item[item_id].append((username, verdict))
            info[item_id] = (item_task, state, required)
    overall: list[list[str]] = []
    by_task: dict[str, list[list[str]]] = defaultdict(list)
    by_pair: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    by_task_pair: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
    population: Counter[str] = Counter()
    left_out: Counter[str] = Counter()
    for item_id, judgements in per_item.items():
        item_task, state, required = info[item_id]
        if state == "removed":
            left_out[REMOVED_UPSTREAM] += 1
            continue
        if len(judgements) < max(2, required):
            left_out[INCOMPLETE if required >= 2 else SINGLE] += 1
            continue
        population[state] += 1
        verdicts = [verdict for _, verdict in judgements]  # annotator 1 (slot 1) first
        overall.append(verdicts)
        by_task[item_task].append(verdicts)
        # Every pair of this item's raters; within a pair, rater order is by name so that each
        # rater's marginals stay theirs.
        for (user_a, verdict_a), (user_b, verdict_b) in itertools.combinations(judgements, 2):
            (u1, v1), (u2, v2) = sorted([(user_a, verdict_a), (user_b, verdict_b)])
            by_pair[(u1, u2)].append((v1, v2))
            by_task_pair[(item_task, u1, u2)].append((v1, v2))
    task_order = {name: i for i, name in enumerate(TASKS)}
    return AgreementReport(
        overall=agreement(overall),
        by_task={
            t: agreement(p) for t, p in sorted(by_task.items(), key=lambda kv: task_order.get(kv[0], 99))
        },
        by_pair={pair: agreement(p) for pair, p in sorted(by_pair.items())},
        by_task_and_pair={k: agreement(p) for k, p in sorted(by_task_pair.items())},
        population={state: population[state] for state in STATES if population[state]},
        left_out=dict(left_out),
        scope=scope or ("items of task " + task if task else "items under review"),
    )


@dataclass
class Activity:
    """Progress over time, in bins of `bin_hours`: decisions made, items settled, per bin and cumulative."""

    bin_hours: float
    starts: list[datetime]
    decisions: list[int]
    verified: list[int]
    rejected: list[int]
    total_items: int

    def cumulative(self, values: list[int]) -> list[int]:
        running, out = 0, []
        for value in values:
            running += value
            out.append(running)
        return out


def activity(db: Session, *, now: datetime | None = None, max_bins: int = 60) -> Activity:
    """Decisions and settlements over time (hourly for the first two days, then daily or coarser).

    Decisions count when first saved (revisions are not new work); settlements when the item reached
    its final state. Bins start at the first decision or settlement.
    """
    now = now or utc_now()
    decided: list[datetime] = list(db.scalars(select(Decision.created_at)))
    settled: list[tuple[datetime, str]] = [
        (at, state)
        for at, state in db.execute(select(Item.settled_at, Item.state).where(Item.settled_at.is_not(None)))
        if at is not None
    ]
    total_items = db.scalar(select(func.count()).select_from(Item)) or 0
    times = decided + [t for t, _ in settled]
    if not times:
        return Activity(1.0, [], [], [], [], total_items)
    first = min(times)
    span_hours = max(1.0, (now - first).total_seconds() / 3600.0)
    bin_hours = 1.0 if span_hours <= 48 else 24.0
    while span_hours / bin_hours > max_bins:
        bin_hours *= 2
    origin = first.replace(minute=0, second=0, microsecond=0)
    if bin_hours >= 24:
        origin = origin.replace(hour=0)
    n_bins = int((now - origin).total_seconds() // (bin_hours * 3600)) + 1
    starts = [origin + timedelta(hours=bin_hours * i) for i in range(n_bins)]

    def index(moment: datetime) -> int:
        return min(n_bins - 1, max(0, int((moment - origin).total_seconds() // (bin_hours * 3600))))

    decisions, verified, rejected = [0] * n_bins, [0] * n_bins, [0] * n_bins
    for moment in decided:
        decisions[index(moment)] += 1
    for moment, state in settled:
        (verified if state == "verified" else rejected)[index(moment)] += 1
    return Activity(bin_hours, starts, decisions, verified, rejected, total_items)
