"""`expvid platform backup FILE` / `restore FILE`: the whole review database in one portable file.

One format for both backends (gzip'd JSON lines), so a backup of the SQLite file a small team
started with restores into the PostgreSQL server it moves to, and the other way round:

    {"format": "expvid-platform-backup/2", "revision": "0004", "tables": {name: [columns...]}, ...}
    {"t": "users", "r": [1, "alice", ...]}            one line per row, tables in foreign-key order
    {"end": true, "counts": {...}, "sha256": ..., "audit_chain_head": {...}}

The end line holds the SHA-256 of every line before it (a file cut short has no end line; a changed
line changes the digest) and the head of the audit trail's hash chain (`db/audit_chain.py`, which
names the one event that was rewritten). `backup` prints the SHA-256 of the whole file and the chain
head: kept apart from the file, they tell a forged file from the one written (`restore --sha256`),
since someone rewriting the file can also recompute what it holds.

The backup reads one consistent snapshot while the platform keeps running (SQLite: one read
transaction in WAL mode; PostgreSQL: REPEATABLE READ, READ ONLY). Sign-in sessions and form drafts
are not kept (everyone signs in again after a restore); everything else is: accounts (argon2 hashes,
API token digests: keep the file as safe as the database), items, decisions, the audit trail.

A restore reads the file twice. First every line is checked, nothing written: the digest, the
chain, and every row against the schema at the backup's revision, the same rules for SQLite and
PostgreSQL (`db/backup_check.py`); each problem is reported as `file:line: reason`. Only a file
without problems is then loaded into a new, empty database, in one transaction: schema migrated to
the backup's revision, rows inserted, row counts checked, sequences moved past the restored ids
(PostgreSQL), then migrated to the newest schema. On any error nothing is left behind in a
PostgreSQL database (an SQLite target file is removed).

A backup made before tamper evidence existed (format /1) has neither digest nor chain: it restores
only with `unverified=True` (`--unverified`), which says so, so that nobody can pass off a doctored
file by rewriting it into the old format.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from alembic import command
from sqlalchemy import Connection, MetaData, Table, inspect, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from expvid.platform.db import audit_chain
from expvid.platform.db.backup_check import RowChecker, UnknownRevision, capped, reference_tables
from expvid.platform.db.engine import is_sqlite, make_engine, normalize_url
from expvid.platform.db.migrate import alembic_config, head_revision

FORMAT = "expvid-platform-backup/2"
#: Backups made before the digest and the audit chain existed.
UNVERIFIED_FORMAT = "expvid-platform-backup/1"
#: Live state that a restore starts without.
SKIPPED = ("alembic_version", "web_sessions", "form_drafts")
_CHUNK = 1000


class BackupError(RuntimeError):
    """A backup that cannot be made or restored; `problems` lists each as `file:line: reason`."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = problems or []
        super().__init__(message if not self.problems else f"{message}\n" + "\n".join(self.problems))


@dataclass
class BackupReport:
    path: Path
    revision: str
    counts: dict[str, int] = field(default_factory=dict)
    #: SHA-256 of the whole file (as `sha256sum` prints it).
    file_sha256: str | None = None
    #: The audit trail's last event id and chain value.
    chain_head: dict[str, Any] | None = None
    #: Audit events whose chain did not hold in the database the backup was made from.
    chain_breaks: list[int] = field(default_factory=list)
    #: What a restore could not vouch for (a backup without digest and chain).
    warnings: list[str] = field(default_factory=list)

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


def file_sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class _Writer:
    """Lines into the gzip'd file, with the running digest of everything written."""

    def __init__(self, handle: gzip.GzipFile) -> None:
        self.handle = handle
        self.digest = hashlib.sha256()

    def line(self, value: Any) -> None:
        data = (json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        self.digest.update(data)
        self.handle.write(data)


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
                with gzip.open(partial, "wb") as handle:
                    writer = _Writer(handle)
                    header = {
                        "format": FORMAT, "revision": revision, "created_at": datetime.now(UTC).isoformat(),
                        "source": connection.dialect.name,
                        "tables": {t.name: [c.name for c in t.columns] for t in tables},
                    }  # fmt: skip
                    writer.line(header)
                    for table in tables:
                        report.counts[table.name] = _dump(connection, table, writer, report)
                    writer.line(
                        {"end": True, "counts": report.counts, "sha256": writer.digest.hexdigest(),
                         "audit_chain_head": report.chain_head}
                    )  # fmt: skip
        os.replace(partial, path)
        report.file_sha256 = file_sha256(path)
        return report
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    finally:
        engine.dispose()


def _dump(connection: Connection, table: Table, writer: _Writer, report: BackupReport) -> int:
    order = list(table.primary_key.columns) or list(table.columns)
    count = 0
    chained = table.name == "audit_events" and "chain" in table.columns
    previous: str | None = audit_chain.GENESIS
    result = connection.execution_options(yield_per=_CHUNK).execute(select(table).order_by(*order))
    for row in result:
        if chained:
            values = row._mapping
            if values["chain"] != audit_chain.link(previous, values):
                report.chain_breaks.append(int(values["id"]))
            previous = values["chain"]
            report.chain_head = {"id": int(values["id"]), "chain": previous}
        writer.line({"t": table.name, "r": [_plain(v) for v in row]})
        count += 1
    return count


def _parse(line: bytes) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(line.decode("utf-8"), parse_constant=refuse)


def _lines(path: Path) -> Iterator[tuple[int, bytes, dict[str, Any] | str]]:
    """(line number, raw bytes, the line's object or why it is not one)."""
    try:
        with gzip.open(path, "rb") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    value = _parse(raw)
                except UnicodeDecodeError as error:
                    yield (
                        number,
                        raw,
                        f"not valid UTF-8 (byte 0x{raw[error.start]:02x} at column {error.start + 1})",
                    )
                    continue
                except ValueError as error:
                    yield number, raw, f"not a line of an expvid backup ({error})"
                    continue
                yield number, raw, value if isinstance(value, dict) else "not a line of an expvid backup"
    except (OSError, EOFError) as error:  # not gzip, or cut short
        raise BackupError(f"{path}: cannot be read as an expvid backup ({error})") from None


def _empty(connection: Connection) -> bool:
    return not [name for name in inspect(connection).get_table_names() if name != "alembic_version"] and (
        _revision(connection) is None
    )


@dataclass
class _Header:
    value: dict[str, Any]
    revision: str
    columns: dict[str, list[str]]
    verified: bool
    #: The schema at `revision` (db/backup_check.py), once read.
    tables: dict[str, Table] = field(default_factory=dict)


def _read_header(path: Path, *, unverified: bool) -> _Header:
    first = next(iter(_lines(path)), None)
    value = first[2] if first is not None else None
    if not isinstance(value, dict) or value.get("format") not in (FORMAT, UNVERIFIED_FORMAT):
        raise BackupError(f"{path}: not an expvid platform backup (expected format {FORMAT})")
    if value["format"] == UNVERIFIED_FORMAT and not unverified:
        raise BackupError(
            f"{path}: this backup was made before backups carried a digest and the audit trail a hash "
            "chain, so nothing can show whether it was changed since. Restore it only if you trust the "
            "file, with --unverified"
        )
    columns = value.get("tables")
    if not isinstance(columns, dict) or not all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in columns.values()
    ):
        raise BackupError(f"{path}:1: the header does not list the tables' columns")
    return _Header(value, str(value.get("revision")), columns, value["format"] == FORMAT)


def check_backup(path: Path, *, unverified: bool = False) -> tuple[_Header, BackupReport]:
    """Read the whole file and check it; raises BackupError listing every problem (nothing written)."""
    if not path.is_file():
        raise BackupError(f"{path}: no such file")
    header = _read_header(path, unverified=unverified)
    report = BackupReport(path=path, revision=header.revision)
    try:
        header.tables = tables = reference_tables(header.revision)
    except UnknownRevision:
        raise BackupError(
            f"{path}: made at schema revision {header.revision}, which this expvid does not know "
            f"(newest here: {head_revision()}); restore it with the expvid that made it"
        ) from None
    checker = RowChecker(tables, header.columns)
    problems = [f"{path}:1: {p}" for p in checker.header_problems()]
    digest = hashlib.sha256()
    end: dict[str, Any] | None = None
    previous_chain: str | None = audit_chain.GENESIS
    chained = "chain" in header.columns.get("audit_events", [])
    for number, raw, value in _lines(path):
        if end is not None:
            problems.append(f"{path}:{number}: a line after the end line")
            break
        if number == 1:
            digest.update(raw)
            continue
        if isinstance(value, str):
            problems.append(f"{path}:{number}: {value}")
            digest.update(raw)
            continue
        if value.get("end"):
            end = {"line": number, **value}
            continue
        digest.update(raw)
        name, row = value.get("t"), value.get("r")
        if not isinstance(name, str) or not isinstance(row, list):
            problems.append(f"{path}:{number}: not a row of an expvid backup")
            continue
        if name not in header.columns:
            problems.append(f"{path}:{number}: a row of {name!r}, a table the header does not list")
            continue
        if not checker.known(name):
            continue  # its header problem is reported once
        record, found = checker.check(name, row)
        problems.extend(f"{path}:{number}: {p}" for p in found)
        report.counts[name] = report.counts.get(name, 0) + 1
        if chained and name == "audit_events" and record is not None:
            if record.get("chain") != audit_chain.link(previous_chain, record):
                problems.append(f"{path}:{number}: {audit_chain.Break(int(record['id'])).describe()}")
            previous_chain = record.get("chain")
    if end is None:
        problems.append(f"{path}: the backup is cut short (no end line)")
    else:
        problems += _end_problems(path, end, report, digest.hexdigest(), header.verified, previous_chain)
    if problems:
        raise BackupError(f"{path}: {len(problems)} problem(s); nothing was restored", capped(problems))
    if not header.verified:
        report.warnings.append(
            f"{path} has no digest and no audit hash chain (an older backup): it was restored as it is, "
            "unverified; the audit trail's chain starts at this restore"
        )
    return header, report


def _end_problems(
    path: Path, end: dict[str, Any], report: BackupReport, digest: str, verified: bool, last_chain: str | None
) -> list[str]:
    where = f"{path}:{end['line']}"
    problems = []
    expected = {k: v for k, v in (end.get("counts") or {}).items() if v}
    if expected != {k: v for k, v in report.counts.items() if v}:
        problems.append(f"{where}: row counts differ from the backup's own ({expected})")
    if verified:
        if end.get("sha256") != digest:
            problems.append(f"{where}: the file's digest does not match its lines (the file was changed)")
        head = end.get("audit_chain_head")
        if (head or {}).get("chain") != (last_chain or None):
            problems.append(f"{where}: the audit trail ends with another event than the backup recorded")
        report.chain_head = head
    return problems


def restore(
    path: Path, url: str, *, unverified: bool = False, expected_sha256: str | None = None
) -> BackupReport:
    """Restore the backup at `path` into the new, empty database at `url` (all or nothing)."""
    url = normalize_url(url)
    if expected_sha256 is not None and path.is_file():
        actual = file_sha256(path)
        if actual != expected_sha256.strip().lower():
            raise BackupError(f"{path}: SHA-256 {actual}, not the {expected_sha256} it was written with")
    header, report = check_backup(path, unverified=unverified)
    sqlite_file = Path(make_url(url).database or "") if is_sqlite(url) else None
    existed = sqlite_file is not None and sqlite_file.exists()
    engine = make_engine(url, pool_size=1)
    loaded = BackupReport(path=path, revision=header.revision, chain_head=report.chain_head,
                          warnings=report.warnings)  # fmt: skip
    try:
        with engine.begin() as connection:
            if not _empty(connection):
                raise BackupError(
                    f"{make_url(url).render_as_string()} is not empty; restore into a new database"
                )
            config = alembic_config()
            config.attributes["connection"] = connection
            command.upgrade(config, header.revision)
            tables = {t.name: t for t in _tables(connection)}
            _load(connection, path, header, tables, loaded)
            if loaded.counts != report.counts:
                raise BackupError(f"{path}: the file changed while it was restored; nothing was restored")
            if connection.dialect.name == "postgresql":
                for table in tables.values():
                    if "id" in table.columns and loaded.counts.get(table.name):
                        connection.execute(
                            text(f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                                 f"(SELECT max(id) FROM {table.name}))")
                        )  # fmt: skip
            command.upgrade(config, "head")
    except BaseException as error:
        engine.dispose()
        if sqlite_file is not None and not existed:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{sqlite_file}{suffix}").unlink(missing_ok=True)
        if isinstance(error, DBAPIError):
            raise BackupError(
                f"{path}: the database refused a row the checks let through "
                f"({str(error.orig).splitlines()[0] if error.orig else error}); nothing was restored"
            ) from error
        raise
    engine.dispose()
    return loaded


def _load(
    connection: Connection, path: Path, header: _Header, tables: dict[str, Table], report: BackupReport
) -> None:
    """Insert the (checked) rows in file order, in chunks per table."""
    checker = RowChecker(header.tables, header.columns)
    checker.header_problems()
    batch: list[dict[str, Any]] = []
    current: str | None = None

    def flush() -> None:
        if batch and current is not None:
            connection.execute(tables[current].insert(), batch)
            batch.clear()

    for number, _raw, value in _lines(path):
        if number == 1 or not isinstance(value, dict) or value.get("end"):
            continue
        name, row = value["t"], value["r"]
        record, problems = checker.check(name, row)
        if record is None:  # the file changed since it was checked
            raise BackupError(f"{path}:{number}: {problems[0]}; nothing was restored")
        if name != current:
            flush()
            current = name
        batch.append(record)
        report.counts[name] = report.counts.get(name, 0) + 1
        if len(batch) >= _CHUNK:
            flush()
    flush()
