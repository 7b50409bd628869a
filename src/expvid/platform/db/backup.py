"""`expvid platform backup FILE` / `restore FILE`: the whole review database in one portable file.

One format for both backends (gzip'd JSON lines), so a backup of the SQLite file a small team
started with restores into the PostgreSQL server it moves to, and the other way round:

    {"format": "expvid-platform-backup/1", "revision": "0003", "tables": {name: [columns...]}, ...}
    {"t": "users", "r": [1, "alice", ...]}            one line per row, tables in foreign-key order
    {"end": true, "counts": {"users": 5, ...}}       a truncated file has no such line: refused

The backup reads one consistent snapshot while the platform keeps running (SQLite: one read
transaction in WAL mode; PostgreSQL: REPEATABLE READ, READ ONLY). Sign-in sessions and form drafts
are not kept (everyone signs in again after a restore); everything else is: accounts (argon2 hashes,
API token digests: keep the file as safe as the database), items, decisions, the audit trail.

A restore goes into a new, empty database, in one transaction: schema migrated to the backup's
revision, rows inserted, row counts checked, sequences moved past the restored ids (PostgreSQL), then
migrated to the newest schema. On any error nothing is left behind in a PostgreSQL database (an
SQLite target file is removed).
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from alembic import command
from sqlalchemy import Connection, DateTime, MetaData, Table, inspect, select, text
from sqlalchemy.engine import make_url

from expvid.platform.db.engine import is_sqlite, make_engine, normalize_url
from expvid.platform.db.migrate import alembic_config, head_revision

FORMAT = "expvid-platform-backup/1"
#: Live state that a restore starts without.
SKIPPED = ("alembic_version", "web_sessions", "form_drafts")
_CHUNK = 1000


class BackupError(RuntimeError):
    pass


@dataclass
class BackupReport:
    path: Path
    revision: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(self.counts.values())


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).isoformat()
    return value


def _tables(connection: Connection) -> list[Table]:
    metadata = MetaData()
    metadata.reflect(bind=connection)
    return [t for t in metadata.sorted_tables if t.name not in SKIPPED]


def _revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def backup(url: str, path: Path) -> BackupReport:
    """Write a backup of the database at `url` to `path` (which must not exist)."""
    if path.exists():
        raise BackupError(f"{path} exists; back up into a new file")
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = make_engine(normalize_url(url), pool_size=1)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin():
                if connection.dialect.name == "postgresql":
                    connection.execute(text("SET TRANSACTION READ ONLY"))
                revision = _revision(connection)
                if revision is None:
                    raise BackupError(
                        f"{make_url(url).render_as_string()}: not a platform database (no schema)"
                    )
                report = BackupReport(path=path, revision=revision)
                tables = _tables(connection)
                with gzip.open(partial, "wt", encoding="utf-8") as handle:
                    header = {
                        "format": FORMAT, "revision": revision, "created_at": datetime.now(UTC).isoformat(),
                        "source": connection.dialect.name,
                        "tables": {t.name: [c.name for c in t.columns] for t in tables},
                    }  # fmt: skip
                    _line(handle, header)
                    for table in tables:
                        report.counts[table.name] = _dump(connection, table, handle)
                    _line(handle, {"end": True, "counts": report.counts})
        os.replace(partial, path)
        return report
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        engine.dispose()


def _line(handle: IO[str], value: Any) -> None:
    handle.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n")


def _dump(connection: Connection, table: Table, handle: IO[str]) -> int:
    order = list(table.primary_key.columns) or list(table.columns)
    count = 0
    result = connection.execution_options(yield_per=_CHUNK).execute(select(table).order_by(*order))
    for row in result:
        _line(handle, {"t": table.name, "r": [_plain(v) for v in row]})
        count += 1
    return count


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    value = json.loads(line)
                except ValueError:
                    raise BackupError(f"{path}:{number}: not a line of an expvid backup") from None
                if not isinstance(value, dict):
                    raise BackupError(f"{path}:{number}: not a line of an expvid backup")
                yield value
    except (OSError, EOFError) as error:  # not gzip, or cut short
        raise BackupError(f"{path}: cannot be read as an expvid backup ({error})") from None


def _empty(connection: Connection) -> bool:
    return not [name for name in inspect(connection).get_table_names() if name != "alembic_version"] and (
        _revision(connection) is None
    )


def restore(path: Path, url: str) -> BackupReport:
    """Restore the backup at `path` into the new, empty database at `url`."""
    url = normalize_url(url)
    if not path.is_file():
        raise BackupError(f"{path}: no such file")
    lines = _lines(path)
    header = next(lines, None)
    if header is None or header.get("format") != FORMAT:
        raise BackupError(f"{path}: not an expvid platform backup (expected format {FORMAT})")
    revision = str(header.get("revision"))
    sqlite_file = Path(make_url(url).database or "") if is_sqlite(url) else None
    existed = sqlite_file is not None and sqlite_file.exists()
    engine = make_engine(url, pool_size=1)
    report = BackupReport(path=path, revision=revision)
    try:
        with engine.begin() as connection:
            if not _empty(connection):
                raise BackupError(
                    f"{make_url(url).render_as_string()} is not empty; restore into a new database"
                )
            config = alembic_config()
            config.attributes["connection"] = connection
            try:
                command.upgrade(config, revision)
            except Exception as error:  # an unknown (newer) revision
                raise BackupError(
                    f"{path}: made at schema revision {revision}, which this expvid does not know "
                    f"(newest here: {head_revision()}); restore it with the expvid that made it"
                ) from error
            tables = {t.name: t for t in _tables(connection)}
            _load(connection, path, header, tables, lines, report)
            if connection.dialect.name == "postgresql":
                for table in tables.values():
                    if "id" in table.columns and report.counts.get(table.name):
                        connection.execute(
                            text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                                 f"(SELECT max(id) FROM {table.name}))")
                        )  # fmt: skip
            command.upgrade(config, "head")
    except BaseException:
        engine.dispose()
        if sqlite_file is not None and not existed:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{sqlite_file}{suffix}").unlink(missing_ok=True)
        raise
    engine.dispose()
    return report


def _load(
    connection: Connection, path: Path, header: dict[str, Any], tables: dict[str, Table],
    lines: Iterator[dict[str, Any]], report: BackupReport,
) -> None:  # fmt: skip
    columns: dict[str, list[str]] = header.get("tables") or {}
    unknown = sorted(set(columns) - set(tables))
    if unknown:
        raise BackupError(f"{path}: tables {', '.join(unknown)} do not exist at revision {report.revision}")
    batch: list[dict[str, Any]] = []
    current: str | None = None
    end: dict[str, Any] | None = None

    def flush() -> None:
        if batch and current is not None:
            connection.execute(tables[current].insert(), batch)
            batch.clear()

    dates = {name: {c.name for c in t.columns if isinstance(c.type, DateTime)} for name, t in tables.items()}
    for value in lines:
        if value.get("end"):
            end = value
            break
        name, row = value.get("t"), value.get("r")
        if name not in columns or not isinstance(row, list) or len(row) != len(columns[name]):
            raise BackupError(f"{path}: a row of {name!r} does not match the header")
        if name != current:
            flush()
            current = name
        record = dict(zip(columns[name], row, strict=True))
        for column in dates[name]:
            if isinstance(record.get(column), str):
                record[column] = datetime.fromisoformat(record[column])
        batch.append(record)
        report.counts[name] = report.counts.get(name, 0) + 1
        if len(batch) >= _CHUNK:
            flush()
    flush()
    if end is None:
        raise BackupError(f"{path}: the backup is cut short (no end line); nothing was restored")
    expected = {k: v for k, v in (end.get("counts") or {}).items() if v}
    if expected != {k: v for k, v in report.counts.items() if v}:
        raise BackupError(
            f"{path}: row counts differ from the backup's own ({expected}); nothing was restored"
        )
