"""Engines and transactions for SQLite (default) and PostgreSQL (teams).

Why two kinds of transaction: on SQLite a read transaction that later writes can fail with
"database is locked" when another writer got there first (the upgrade from a shared to a reserved
lock cannot wait). Write transactions therefore start with `BEGIN IMMEDIATE`, which takes the write
lock up front and waits `busy_timeout` for it; reads start with a plain `BEGIN` and, thanks to WAL,
never block writers. On PostgreSQL, writes lock the rows they change with `SELECT ... FOR UPDATE`
(see the services), and a deadlock or serialization failure is retried by `Database.write_retry`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

T = TypeVar("T")

#: PostgreSQL error codes worth retrying: serialization_failure, deadlock_detected.
_RETRYABLE_PG_CODES = {"40001", "40P01"}


def normalize_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs given without a driver (SQLAlchemy would pick psycopg2)."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def make_engine(url: str, *, pool_size: int = 20) -> Engine:
    """An engine with the settings the platform relies on (WAL, foreign keys, busy timeout...)."""
    url = normalize_url(url)
    if is_sqlite(url):
        database = make_url(url).database
        if not database or database == ":memory:":
            # Each connection would see its own empty database; the platform needs a file.
            raise ValueError(
                "the platform needs a SQLite file (sqlite:///path.db), not an in-memory database"
            )
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=pool_size,
            max_overflow=pool_size,
        )
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy emit BEGIN itself (see _on_begin) instead of pysqlite's implicit one.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        immediate = connection.get_execution_options().get("expvid_write", False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def _is_retryable(error: DBAPIError) -> bool:
    code = getattr(error.orig, "sqlstate", None) or getattr(error.orig, "pgcode", None)
    if code in _RETRYABLE_PG_CODES:
        return True
    return isinstance(error, OperationalError) and "database is locked" in str(error.orig)


class Database:
    """Session factories for reads and writes on one engine."""

    def __init__(self, url: str, *, pool_size: int = 20) -> None:
        self.url = normalize_url(url)
        self.engine = make_engine(self.url, pool_size=pool_size)
        self.sqlite = is_sqlite(self.url)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.engine.execution_options(expvid_write=True), expire_on_commit=False)
        self._write_lock: AbstractContextManager[object] = threading.RLock() if self.sqlite else nullcontext()

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading; anything written in it is discarded.

        Closing (not rolling back) detaches loaded objects with their values intact, so callers can
        use them after the block; the connection's transaction is rolled back when it returns to the pool.
        """
        session = self._read()
        try:
            yield session
        finally:
            session.close()

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction: committed when the block ends normally, rolled back on error.

        On SQLite, writers of this process queue on a lock before `BEGIN IMMEDIATE`: SQLite admits one
        writer at a time anyway, and its busy handler waits by sleeping in growing steps (up to 100 ms),
        which under contention turned into half-second latency tails. Other processes still meet the
        busy timeout, as before.
        """
        with self._write_lock:
            session = self._write()
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise
            finally:
                session.close()

    def write_retry(self, work: Callable[[Session], T], *, attempts: int = 4) -> T:
        """Run `work` in a write transaction, retrying deadlocks and serialization failures."""
        for attempt in range(1, attempts + 1):
            try:
                with self.write() as session:
                    return work(session)
            except DBAPIError as error:
                if attempt == attempts or not _is_retryable(error):
                    raise
                time.sleep(0.02 * attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def dispose(self) -> None:
        self.engine.dispose()
