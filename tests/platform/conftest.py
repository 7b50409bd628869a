"""Fixtures for the platform tests: both database backends, a candidate directory, a live server.

Every test that takes `db_url` (directly or through `env`) runs twice: on a SQLite file and on a
throwaway PostgreSQL cluster started here with initdb / pg_ctl (as the `postgres` user when the tests
run as root, since initdb refuses root). Each test gets a fresh database cloned from a migrated
template, so tests never see each other's rows.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_batches import with_uids
from platform_candidates import make_candidates
from platform_env import FAST_PASSWORDS, USERS, Env, add_users

from expvid.platform import PlatformSettings, create_app
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.services.importer import import_candidates
from expvid.platform.testing import LiveServer, TemporaryPostgres, postgres_available

# --- PostgreSQL -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[TemporaryPostgres]:
    if not postgres_available():
        message = "PostgreSQL binaries (initdb, pg_ctl, postgres) are not on PATH"
        if os.environ.get("EXPVID_REQUIRE_POSTGRES") == "1":
            pytest.fail(message + " and EXPVID_REQUIRE_POSTGRES=1")
        pytest.skip(message)
    with TemporaryPostgres() as cluster:
        yield cluster


# --- a fresh migrated database per test, on each backend ---------------------------------------------


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def template_db(
    backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> str:
    """A migrated database to clone: a SQLite file, or a PostgreSQL template database."""
    if backend == "sqlite":
        path = tmp_path_factory.mktemp("template") / "template.db"
        upgrade_to_head(f"sqlite:///{path}")
        return str(path)
    cluster: TemporaryPostgres = request.getfixturevalue("pg_cluster")
    upgrade_to_head(cluster.create_database("expvid_template"))
    return "expvid_template"


@pytest.fixture
def db_url(backend: str, template_db: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if backend == "sqlite":
        path = tmp_path / "platform.db"
        shutil.copyfile(template_db, path)
        yield f"sqlite:///{path}"
        return
    cluster: TemporaryPostgres = request.getfixturevalue("pg_cluster")
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = cluster.create_database(name, template=template_db)
    try:
        yield url
    finally:
        cluster.drop_database(name)


# --- candidate directory, users, imported items -----------------------------------------------------


@pytest.fixture(scope="session")
def candidates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_candidates(tmp_path_factory.mktemp("candidates") / "cand")


@pytest.fixture
def env(db_url: str, candidates: Path) -> Iterator[Env]:
    database = Database(db_url)
    settings = PlatformSettings(database_url=db_url, passwords=FAST_PASSWORDS)
    users = add_users(database, USERS)
    import_candidates(database, candidates)
    try:
        yield Env(url=db_url, database=database, settings=settings, candidates=candidates, users=users)
    finally:
        database.dispose()


@pytest.fixture
def uid_campaign(db_url: str, candidates: Path, tmp_path: Path) -> Iterator[Env]:
    """Batch 1 of a campaign: the fixture's items with stable ids (`with_uids`), imported once;
    `Env.candidates` is that batch's folder, for making the next one."""
    database = Database(db_url)
    users = add_users(database, USERS)
    first = with_uids(candidates, tmp_path / "batch1")
    import_candidates(database, first)
    settings = PlatformSettings(database_url=db_url, passwords=FAST_PASSWORDS)
    try:
        yield Env(url=db_url, database=database, settings=settings, candidates=first, users=users)
    finally:
        database.dispose()


# --- a real server on loopback ----------------------------------------------------------------------


@pytest.fixture
def server(env: Env) -> Iterator[LiveServer]:
    with LiveServer(create_app(env.settings, database=env.database)) as live:
        yield live
