"""Helpers for testing and benchmarking the platform against real servers.

- `TemporaryPostgres`: a throwaway PostgreSQL cluster (initdb / pg_ctl on a Unix socket in a temp
  directory; run as the `postgres` user when we are root, since initdb refuses root).
- `LiveServer`: uvicorn serving an app on 127.0.0.1 in a background thread.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn
from sqlalchemy import create_engine, text

POSTGRES_BINARIES = ("initdb", "pg_ctl", "postgres")


def postgres_available() -> bool:
    return all(shutil.which(name) for name in POSTGRES_BINARIES)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TemporaryPostgres:
    """A PostgreSQL cluster that lives as long as the `with` block (fsync off: test data only)."""

    def __init__(self, *, max_connections: int = 300) -> None:
        if not postgres_available():
            raise RuntimeError("PostgreSQL binaries (initdb, pg_ctl, postgres) are not on PATH")
        self.base = Path(tempfile.mkdtemp(prefix="expvid-pg-"))
        self.data = self.base / "data"
        self.port = free_port()
        self.max_connections = max_connections
        self.run_as: str | None = None
        if os.geteuid() == 0:
            self.run_as = "postgres"
            account = pwd.getpwnam(self.run_as)
            os.chown(self.base, account.pw_uid, account.pw_gid)

    def _run(self, *args: str) -> None:
        subprocess.run(args, check=True, user=self.run_as, capture_output=True, timeout=120)

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.base}&port={self.port}"

    def create_database(self, name: str, *, template: str | None = None) -> str:
        admin = create_engine(self.url("postgres"), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as connection:
                suffix = f" TEMPLATE {template}" if template else ""
                connection.execute(text(f"CREATE DATABASE {name}{suffix}"))
        finally:
            admin.dispose()
        return self.url(name)

    def drop_database(self, name: str) -> None:
        admin = create_engine(self.url("postgres"), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as connection:
                connection.execute(text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        finally:
            admin.dispose()

    def start(self) -> TemporaryPostgres:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        options = (
            f"-k {self.base} -p {self.port} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
            f"-c full_page_writes=off -c max_connections={self.max_connections}"
        )
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.base / "log"), "-w", "start")
        return self

    def stop(self) -> None:
        subprocess.run(
            ["pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop"],
            user=self.run_as,
            capture_output=True,
        )
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> TemporaryPostgres:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class LiveServer:
    """uvicorn serving `app` on 127.0.0.1 in a background thread, for the duration of a `with` block."""

    def __init__(self, app: object) -> None:
        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY on accepted sockets only when the listening
        # socket says TCP; without it every keep-alive response waits ~40 ms (Nagle + delayed ACK).
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._socket.bind(("127.0.0.1", 0))
        self.port = int(self._socket.getsockname()[1])
        # Proxy headers are the app's business (trusted from configured proxies only), not uvicorn's.
        config = uvicorn.Config(
            app,  # type: ignore[arg-type]
            log_level="warning",
            lifespan="on",
            timeout_keep_alive=30,
            proxy_headers=False,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self._socket.close()
