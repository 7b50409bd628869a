"""Every row of a backup checked against the schema before a restore writes anything.

Why here and not by the database: a damaged row (a bad date, NULL in a NOT NULL column, a duplicate
id, a dangling foreign key, text in an integer column, a NUL character) made the insert fail with a
traceback of hundreds of lines, and SQLite, which types loosely and stores NUL, took rows that
PostgreSQL refuses (`items.version = "abc"` restored with exit 0), so a database could hold what a
move to PostgreSQL would refuse. The rules here are the same for both targets: they come from the
schema at the backup's revision as an in-memory SQLite database migrated to it describes it
(`reference_tables`), and each is PostgreSQL's (integer ranges, `varchar(n)` lengths, no NUL in text
or JSON, no NaN, time zones), so a backup restores into one exactly when it restores into the other.

Problems are reported one per line, `file:line: table.column: reason`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from alembic import command
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    Integer,
    MetaData,
    Numeric,
    SmallInteger,
    String,
    Table,
    UniqueConstraint,
    create_engine,
)
from sqlalchemy.pool import StaticPool

from expvid.platform.db.migrate import alembic_config

_INT_RANGES = {
    "smallint": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
}


class UnknownRevision(ValueError):
    pass


def reference_tables(revision: str) -> dict[str, Table]:
    """The tables at schema `revision`, from an in-memory SQLite database migrated to it."""
    engine = create_engine("sqlite://", poolclass=StaticPool)
    try:
        with engine.begin() as connection:
            config = alembic_config()
            config.attributes["connection"] = connection
            try:
                command.upgrade(config, revision)
            except Exception as error:  # an unknown (newer) revision
                raise UnknownRevision(revision) from error
        metadata = MetaData()
        metadata.reflect(bind=engine)
        return {table.name: table for table in metadata.sorted_tables}
    finally:
        engine.dispose()


def _kind(column_type: Any) -> str:
    """The rule a column's values follow (order matters: Boolean before Integer, JSON first)."""
    if isinstance(column_type, JSON):
        return "json"
    if isinstance(column_type, Boolean):
        return "bool"
    if isinstance(column_type, BigInteger):
        return "bigint"
    if isinstance(column_type, SmallInteger):
        return "smallint"
    if isinstance(column_type, Integer):
        return "integer"
    if isinstance(column_type, Float | Numeric):
        return "float"
    if isinstance(column_type, DateTime):
        return "datetime"
    if isinstance(column_type, String):
        return "text"
    return "any"


def _text_problem(value: str, limit: int | None) -> str | None:
    if "\x00" in value:
        return "contains a NUL character (U+0000), which PostgreSQL cannot store"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate (not valid Unicode text)"
    if limit is not None and len(value) > limit:
        return f"is {len(value)} characters long; the column holds at most {limit}"
    return None


def _json_problem(value: Any, path: str = "") -> str | None:
    if isinstance(value, str):
        problem = _text_problem(value, None)
        return f"{path or 'the value'} {problem}" if problem else None
    if isinstance(value, float) and not math.isfinite(value):
        return f"{path or 'the value'} is {value!r}, which JSON in PostgreSQL cannot hold"
    if isinstance(value, dict):
        for key, item in value.items():
            problem = _json_problem(key, f"{path}key {key!r}") or _json_problem(item, f"{path}[{key!r}]")
            if problem:
                return problem
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _json_problem(item, f"{path}[{index}]")
            if problem:
                return problem
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_value(kind: str, value: Any, *, length: int | None = None) -> tuple[Any, str | None]:
    """(the value to insert, or a reason it cannot be) for a non-NULL value of a column of `kind`."""
    if kind in _INT_RANGES:
        if type(value) is not int:
            return None, f"{_shown(value)} is not an integer"
        low, high = _INT_RANGES[kind]
        if not low <= value <= high:
            return None, f"{value} is out of the range of a {kind} column"
        return value, None
    if kind == "bool":
        return (value, None) if isinstance(value, bool) else (None, f"{_shown(value)} is not true or false")
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, f"{_shown(value)} is not a number"
        if not math.isfinite(value):
            return None, f"{value!r} is not a finite number"
        return value, None
    if kind == "datetime":
        if not isinstance(value, str):
            return None, f"{_shown(value)} is not a date and time"
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None, f"{_shown(value)} is not an ISO 8601 date and time"
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC), None
    if kind == "text":
        if not isinstance(value, str):
            return None, f"{_shown(value)} is not text"
        problem = _text_problem(value, length)
        return (None, problem) if problem else (value, None)
    if kind == "json":
        problem = _json_problem(value)
        return (None, problem) if problem else (value, None)
    return value, None


@dataclass
class _Rules:
    table: Table
    columns: list[str]
    kinds: dict[str, tuple[str, int | None, bool]]  # column -> (kind, length, nullable)
    uniques: list[tuple[str, ...]]
    foreign_keys: list[tuple[tuple[str, ...], str, tuple[str, ...]]]
    #: Column tuples other tables refer to (their values are kept as the targets of foreign keys).
    referred: set[tuple[str, ...]] = field(default_factory=set)


@dataclass
class RowChecker:
    """Checks rows in file order; keeps the keys seen, for uniqueness and foreign keys."""

    tables: dict[str, Table]
    header: dict[str, list[str]]
    _rules: dict[str, _Rules] = field(default_factory=dict)
    #: (table, columns) -> values seen, for unique constraints and as targets of foreign keys.
    _seen: dict[tuple[str, tuple[str, ...]], set[tuple[Any, ...]]] = field(
        default_factory=lambda: defaultdict(set)
    )

    def header_problems(self) -> list[str]:
        problems = []
        for name, columns in self.header.items():
            table = self.tables.get(name)
            if table is None:
                problems.append(f"table {name!r} does not exist in the schema of this backup's revision")
                continue
            known = [c.name for c in table.columns]
            missing = [c for c in known if c not in columns]
            extra = [c for c in columns if c not in known]
            if missing or extra or len(set(columns)) != len(columns):
                problems.append(
                    f"table {name}: the header's columns do not match the schema"
                    + (f" (missing: {', '.join(missing)})" if missing else "")
                    + (f" (unknown: {', '.join(extra)})" if extra else "")
                )
                continue
            self._rules[name] = self._make_rules(table, columns)
        for rules in list(self._rules.values()):
            for _, target, target_columns in rules.foreign_keys:
                if target in self._rules:
                    self._rules[target].referred.add(target_columns)
        return problems

    def _make_rules(self, table: Table, columns: list[str]) -> _Rules:
        kinds = {
            c.name: (_kind(c.type), getattr(c.type, "length", None), bool(c.nullable)) for c in table.columns
        }
        uniques = [tuple(c.name for c in table.primary_key.columns)] if table.primary_key.columns else []
        # Constraints come as sets: sorted, so that problems are listed in one order on every run.
        named = {
            tuple(c.name for c in k.columns) for k in table.constraints if isinstance(k, UniqueConstraint)
        }
        named |= {tuple(c.name for c in index.columns) for index in table.indexes if index.unique}
        uniques += sorted(named - set(uniques))
        foreign_keys = sorted(
            (
                tuple(e.parent.name for e in fk.elements),
                fk.referred_table.name,
                tuple(e.column.name for e in fk.elements),
            )
            for fk in table.foreign_key_constraints
        )
        return _Rules(table, columns, kinds, uniques, foreign_keys)

    def check(self, name: str, values: list[Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """The record to insert, or the problems of this row (one line each)."""
        rules = self._rules[name]
        if len(values) != len(rules.columns):
            return None, [f"table {name}: {len(values)} values, the header has {len(rules.columns)} columns"]
        record: dict[str, Any] = {}
        problems = []
        for column, value in zip(rules.columns, values, strict=True):
            kind, length, nullable = rules.kinds[column]
            if value is None:
                if not nullable:
                    problems.append(f"{name}.{column}: NULL in a NOT NULL column")
                record[column] = None
                continue
            converted, problem = check_value(kind, value, length=length)
            if problem:
                problems.append(f"{name}.{column}: {problem}")
            record[column] = converted
        # A row with a bad value still holds its keys: rows referring to it are not reported too.
        for columns in rules.uniques:
            key = tuple(record[c] for c in columns)
            if any(v is None for v in key):
                continue  # SQL: NULLs never clash
            seen = self._seen[(name, columns)]
            if key in seen:
                shown = ", ".join(f"{c}={_shown(v)}" for c, v in zip(columns, key, strict=True))
                problems.append(f"{name}: duplicate {shown} (it must be unique)")
            seen.add(key)
        for columns, target, target_columns in rules.foreign_keys:
            key = tuple(record[c] for c in columns)
            if any(v is None for v in key):
                continue
            if key not in self._seen[(target, target_columns)]:
                shown = ", ".join(f"{c}={_shown(v)}" for c, v in zip(columns, key, strict=True))
                problems.append(f"{name}: {shown} refers to no row of {target} before it")
        for columns in rules.referred - set(rules.uniques):
            self._seen[(name, columns)].add(tuple(record[c] for c in columns))
        return (None, problems) if problems else (record, [])

    def known(self, name: str) -> bool:
        return name in self._rules


def capped(problems: Iterator[str] | list[str], limit: int = 60) -> list[str]:
    """At most `limit` lines, and one saying how many more there were."""
    listed = list(problems)
    if len(listed) <= limit:
        return listed
    return [*listed[:limit], f"... and {len(listed) - limit} more problem(s)"]
