"""A hash chain over the audit trail: rewriting or removing one event shows.

Each `audit_events` row carries `chain` = SHA-256 of the previous row's `chain` (in id order; ""
before the first) and of the row's own canonical form (every column but `id` and `chain`). The
rows are written only by `services/audit.py` when a transaction commits, under a lock that orders
them (SQLite: the single writer; PostgreSQL: an advisory lock), so ids follow the chain.

Checked by `expvid platform restore` (every row of a backup), and by `backup` as it reads the live
table. A forger who recomputes every later link makes a consistent trail, but a different head: the
head `backup` prints (and the backup's SHA-256) kept elsewhere is what such a file is compared with.

The canonical form is version 1 and must never change (migration 0004 chained older trails with
it): values as they come back from either database, so that SQLite and PostgreSQL, and a backup's
JSON, give the same text. Times are UTC with microseconds; numbers are written so that 1.0, 1 and
PostgreSQL's numeric read back as int or float compare equal.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

#: The columns a link covers, in this order.
COLUMNS = (
    "at",
    "actor_id",
    "actor_name",
    "item_id",
    "entity",
    "entity_id",
    "action",
    "before",
    "after",
    "reason",
)
GENESIS = ""
_EXACT = 10**15


def _number(value: int | float) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("the audit trail holds no NaN or infinity")
        if value.is_integer() and abs(value) < _EXACT:
            return str(int(value))
        return repr(value)
    return str(value) if abs(value) < _EXACT else repr(float(value))


def canonical(value: Any) -> str:
    """One text per JSON value, whichever database it came back from."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{canonical(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def json_round_trip(value: Any) -> Any:
    """`value` as a JSON column hands it back (tuples become lists, keys become text)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def canonical_time(value: datetime | str) -> str:
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def link(previous: str | None, row: Mapping[Any, Any]) -> str:
    """The `chain` value of `row` after an event whose `chain` is `previous`."""
    body = canonical([canonical_time(row["at"]), *(row[c] for c in COLUMNS[1:])])
    return hashlib.sha256(f"{previous or GENESIS}\n{body}".encode()).hexdigest()


@dataclass(frozen=True)
class Break:
    """A row whose `chain` does not follow from the row before it and its own content."""

    event_id: int
    #: Where the row was read from (a backup's line number), when known.
    line: int | None = None

    def describe(self) -> str:
        return (
            f"audit event {self.event_id}: the hash chain is broken here (this event, or one before it, "
            "was changed, inserted or removed)"
        )


def check(rows: Iterable[tuple[Mapping[Any, Any], int | None]]) -> Iterable[Break]:
    """The breaks in `rows` (audit events in id order, with where each was read from).

    Each row is checked against the `chain` stored in the row before it, so a rewritten row is
    named alone (and a removed one by the row after it)."""
    previous: str | None = GENESIS
    for row, line in rows:
        if row.get("chain") != link(previous, row):
            yield Break(int(row["id"]), line)
        previous = row.get("chain")
