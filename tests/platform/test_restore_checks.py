"""A damaged or doctored backup restores nothing, says `file:line: reason` for every problem, and
says the same whichever database it was to go into; an older backup restores only when asked."""

from __future__ import annotations

import gzip
import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from platform_env import Env, decide
from sqlalchemy import inspect
from typer.testing import CliRunner

from expvid.cli.platform import platform_app
from expvid.platform.db import audit_chain
from expvid.platform.db.backup import BackupError, backup, restore
from expvid.platform.db.backup_check import reference_tables
from expvid.platform.db.engine import Database, make_engine
from expvid.platform.db.migrate import head_revision
from expvid.platform.services import audit
from expvid.platform.services.audit import chain_breaks
from expvid.platform.services.errors import SYSTEM
from expvid.platform.testing import TemporaryPostgres

runner = CliRunner()
Lines = list[dict[str, Any]]


def _read(path: Path) -> Lines:
    return [json.loads(line) for line in gzip.decompress(path.read_bytes()).decode().splitlines()]


def _write(path: Path, lines: Lines, *, fix_digest: bool = True) -> Path:
    """Write `lines` as a backup; with `fix_digest` the end line's digest is recomputed, as someone
    doctoring the file would."""
    encoded = [json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines]
    if fix_digest and "sha256" in lines[-1]:
        lines[-1]["sha256"] = hashlib.sha256("".join(encoded[:-1]).encode()).hexdigest()
        encoded[-1] = json.dumps(lines[-1], separators=(",", ":")) + "\n"
    path.write_bytes(gzip.compress("".join(encoded).encode()))
    return path


def _row(lines: Lines, table: str, **where: Any) -> tuple[int, list[Any]]:
    """(1-based line number, row) of the first row of `table` whose columns match `where`."""
    columns = lines[0]["tables"][table]
    for number, line in enumerate(lines, start=1):
        if line.get("t") == table and all(line["r"][columns.index(k)] == v for k, v in where.items()):
            return number, line["r"]
    raise AssertionError(f"no {table} row with {where}")


def _set(lines: Lines, table: str, number: int, column: str, value: Any) -> None:
    lines[number - 1]["r"][lines[0]["tables"][table].index(column)] = value


def _targets(tmp_path: Path, cluster: TemporaryPostgres) -> list[str]:
    return [f"sqlite:///{tmp_path / f'target-{uuid.uuid4().hex[:6]}.db'}",
            cluster.create_database(f"r_{uuid.uuid4().hex[:12]}")]  # fmt: skip


def _empty(url: str) -> bool:
    if url.startswith("sqlite"):
        return not Path(url.removeprefix("sqlite:///")).exists()
    engine = make_engine(url, pool_size=1)
    try:
        return inspect(engine).get_table_names() == []
    finally:
        engine.dispose()


def _refused(file: Path, targets: list[str], **options: Any) -> list[str]:
    """Restore `file` into every target: refused the same way by each, leaving each empty."""
    outcomes = []
    for url in targets:
        with pytest.raises(BackupError) as refusal:
            restore(file, url, **options)
        assert _empty(url), url
        outcomes.append(refusal.value.problems)
    assert all(problems == outcomes[0] for problems in outcomes), outcomes
    return outcomes[0]


def test_every_damaged_row_is_named_and_nothing_is_written(
    env: Env, tmp_path: Path, pg_cluster: TemporaryPostgres
) -> None:
    decide(env, "alice", "tools/0", "approve")
    file = tmp_path / "good.gz"
    backup(env.url, file)
    lines = _read(file)
    damaged = tmp_path / "damaged.gz"
    bad_date, _ = _row(lines, "items", key=env.item("materials/0").key)
    _set(lines, "items", bad_date, "created_at", "yesterday")
    version, _ = _row(lines, "items", key=env.item("tools/0").key)
    _set(lines, "items", version, "version", "abc")
    null_hash, _ = _row(lines, "users", username="bob")
    _set(lines, "users", null_hash, "password_hash", None)
    nul_name, _ = _row(lines, "users", username="dave")
    _set(lines, "users", nul_name, "username", "da\x00ve")
    decision_line, decision = _row(lines, "decisions", user_id=env.users["alice"])
    dangling, _ = _row(lines, "assignments", user_id=env.users["bob"])
    _set(lines, "assignments", dangling, "item_id", 999_999)
    lines.insert(decision_line, {"t": "decisions", "r": list(decision)})  # the same id twice
    lines[-1]["counts"]["decisions"] += 1
    problems = _refused(_write(damaged, lines), _targets(tmp_path, pg_cluster))
    expected = {
        bad_date: "items.created_at: 'yesterday' is not an ISO 8601 date and time",
        version: "items.version: 'abc' is not an integer",
        null_hash: "users.password_hash: NULL in a NOT NULL column",
        nul_name: "users.username: contains a NUL character",
        decision_line + 1: f"decisions: duplicate id={decision[0]}",
        dangling + (dangling > decision_line): "assignments: item_id=999999 refers to no row of items",
    }
    for line, reason in expected.items():
        assert any(p.startswith(f"{damaged}:{line}: {reason}") for p in problems), (line, reason, problems)
    # One line per damage (the duplicate decision also repeats its (item, user) pair); nothing else.
    assert len(problems) == len(expected) + 1, problems
    # The command says the same, one line per problem, and exits 1.
    result = runner.invoke(
        platform_app, ["restore", str(damaged), "--db", f"sqlite:///{tmp_path / 'cli.db'}"]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"{damaged}:{version}: items.version: 'abc' is not an integer" in result.output
    assert not (tmp_path / "cli.db").exists()


def test_a_doctored_audit_trail_is_caught(env: Env, tmp_path: Path, pg_cluster: TemporaryPostgres) -> None:
    file = tmp_path / "good.gz"
    report = backup(env.url, file)
    assert report.chain_head is not None and report.chain_breaks == []
    lines = _read(file)
    events = [n for n, line in enumerate(lines, start=1) if line.get("t") == "audit_events"]
    rewritten = events[1::2]  # every other event, as someone covering tracks among real ones
    assert len(rewritten) >= 15
    for number in rewritten:
        _set(lines, "audit_events", number, "actor_name", "someone-else")
    targets = _targets(tmp_path, pg_cluster)
    # Digest left as it was: the file's own digest gives it away, and the chain names every event.
    problems = _refused(
        _write(tmp_path / "rewritten.gz", [dict(x) for x in lines], fix_digest=False), targets
    )
    assert any("the file's digest does not match" in p for p in problems)
    # Digest recomputed by the forger: the chain still names each rewritten event, by line.
    forged = _write(tmp_path / "forged.gz", lines)
    problems = _refused(forged, targets)
    broken = [p for p in problems if "hash chain is broken" in p]
    assert [p.split(":")[1] for p in broken] == [str(n) for n in rewritten], problems
    # Chain recomputed too: a consistent file, told apart only by the SHA-256 `backup` printed.
    previous = ""
    columns = lines[0]["tables"]["audit_events"]
    for number in events:
        previous = audit_chain.link(previous, dict(zip(columns, lines[number - 1]["r"], strict=True)))
        _set(lines, "audit_events", number, "chain", previous)
    lines[-1]["audit_chain_head"]["chain"] = previous
    recomputed = _write(tmp_path / "recomputed.gz", lines)
    with pytest.raises(BackupError, match=f"not the {report.file_sha256} it was written with"):
        restore(recomputed, targets[1], expected_sha256=report.file_sha256)
    assert _empty(targets[1])
    restore(file, targets[1], expected_sha256=report.file_sha256)  # the genuine file, checked


def _as_revision_0003(lines: Lines) -> Lines:
    """The same data as a backup made by expvid before revision 0004 (format /1, no digest, no chain)."""
    dropped = {"items": "annotators_required", "audit_events": "chain"}
    header = dict(lines[0], format="expvid-platform-backup/1", revision="0003")
    at_0003 = reference_tables("0003")  # later tables (releases, settings, audits...) did not exist
    header["tables"] = {t: list(c) for t, c in header["tables"].items() if t in at_0003}
    old = [header]
    for line in lines[1:]:
        if line.get("end"):
            counts = {t: n for t, n in line["counts"].items() if t in header["tables"]}
            old.append({"end": True, "counts": counts})
            continue
        if line["t"] not in header["tables"]:
            continue
        row = list(line["r"])
        if line["t"] in dropped:
            del row[lines[0]["tables"][line["t"]].index(dropped[line["t"]])]
        old.append({"t": line["t"], "r": row})
    for table, column in dropped.items():
        header["tables"][table].remove(column)
    return old


def test_an_older_backup_restores_only_when_asked_and_its_trail_is_chained_from_then_on(
    env: Env, tmp_path: Path, pg_cluster: TemporaryPostgres
) -> None:
    file = tmp_path / "good.gz"
    backup(env.url, file)
    old = _write(tmp_path / "old.gz", _as_revision_0003(_read(file)))
    for url in _targets(tmp_path, pg_cluster):
        refused = runner.invoke(platform_app, ["restore", str(old), "--db", url])
        assert refused.exit_code == 1 and "--unverified" in refused.output and _empty(url)
        result = runner.invoke(platform_app, ["restore", str(old), "--db", url, "--unverified"])
        assert result.exit_code == 0, result.output
        assert "unverified" in result.output
        restored = Database(url)
        try:
            with restored.read() as db:
                assert chain_breaks(db) == []  # migration 0004 chained the restored trail
            with restored.write() as db:
                audit.record(db, SYSTEM, "test.after_restore", entity="test", entity_id=1)
            with restored.read() as db:
                assert chain_breaks(db) == []
        finally:
            restored.dispose()
        again = backup(url, tmp_path / f"again-{uuid.uuid4().hex[:6]}.gz")
        assert again.revision == head_revision() and again.chain_breaks == []
