"""`expvid platform backup` / `restore`: one portable file, SQLite <-> PostgreSQL, all or nothing."""

from __future__ import annotations

import gzip
import uuid
from pathlib import Path

import pytest
from platform_env import Env, decide, password_of
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from expvid.cli.platform import platform_app
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.backup import BackupError, backup, restore
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import current_revision, head_revision
from expvid.platform.db.models import AuditEvent, Decision, Item, User, WebSession
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.users import authenticate
from expvid.platform.testing import TemporaryPostgres

runner = CliRunner()


def _snapshot(database: Database) -> dict[str, object]:
    with database.read() as db:
        return {
            "items": [(i.key, i.release_key, i.state, i.version, i.question, i.options, i.flags)
                      for i in db.scalars(select(Item).order_by(Item.id))],
            "decisions": [(d.item_id, d.user_id, d.verdict, d.justification, d.created_at)
                          for d in db.scalars(select(Decision).order_by(Decision.id))],
            "audit": db.scalar(select(func.count()).select_from(AuditEvent)),
            "users": [(u.username, u.role, u.disciplines, u.password_hash)
                      for u in db.scalars(select(User).order_by(User.id))],
        }  # fmt: skip


def test_a_backup_restores_into_either_backend_and_works(
    env: Env, tmp_path: Path, pg_cluster: TemporaryPostgres
) -> None:
    decide(env, "alice", "tools/0", "approve")
    decide(env, "bob", "tools/0", "approve")
    decide(
        env,
        "alice",
        "materials/0",
        "reject",
        justification="the clip shows trypsin, not vitronectin — “quoted”",
    )
    file = tmp_path / "review.expvid-backup.gz"
    result = runner.invoke(platform_app, ["backup", str(file), "--db", env.url])
    assert result.exit_code == 0, result.output
    assert f"schema revision {head_revision()}" in result.output
    assert (
        runner.invoke(platform_app, ["backup", str(file), "--db", env.url]).exit_code == 1
    )  # never overwritten
    original = _snapshot(env.database)

    targets = [
        f"sqlite:///{tmp_path / 'restored.db'}",
        pg_cluster.create_database(f"r_{uuid.uuid4().hex[:12]}"),
    ]
    for url in targets:
        result = runner.invoke(platform_app, ["restore", str(file), "--db", url])
        assert result.exit_code == 0, result.output
        assert current_revision(url) == head_revision()
        restored = Database(url)
        try:
            assert _snapshot(restored) == original
            with restored.write() as db:
                assert db.scalar(select(func.count()).select_from(WebSession)) == 0  # everyone signs in again
                assert (
                    authenticate(db, Passwords(PasswordPolicy()), "alice", password_of("alice")) is not None
                )
                # New rows get new ids (PostgreSQL sequences moved past the restored ones)...
                decide_env = Env(url=url, database=restored, settings=env.settings, candidates=env.candidates,
                                 users=env.users)  # fmt: skip
            decide(decide_env, "bob", "materials/0", "approve")
            # ...and the restored audit trail is append-only again.
            with pytest.raises(DBAPIError, match="append-only"), restored.write() as db:
                db.execute(text("DELETE FROM audit_events"))
        finally:
            restored.dispose()
        again = runner.invoke(platform_app, ["restore", str(file), "--db", url])
        assert again.exit_code == 1 and "not empty" in again.output


def test_a_damaged_backup_restores_nothing(env: Env, tmp_path: Path) -> None:
    file = tmp_path / "full.gz"
    report = backup(env.url, file)
    assert report.counts["items"] == 11 and "web_sessions" not in report.counts
    lines = gzip.decompress(file.read_bytes()).decode().splitlines()
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(("\n".join(lines[:-5]) + "\n").encode()))
    target = tmp_path / "target.db"
    with pytest.raises(BackupError, match="cut short"):
        restore(cut, f"sqlite:///{target}")
    assert not target.exists()
    (tmp_path / "junk.gz").write_bytes(b"not gzip at all")
    with pytest.raises(BackupError, match="cannot be read"):
        restore(tmp_path / "junk.gz", f"sqlite:///{target}")
    with pytest.raises(BackupError, match="not empty"):
        restore(file, env.url)
