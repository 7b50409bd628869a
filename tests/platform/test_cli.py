"""`expvid platform ...` commands, run through Typer against both database backends."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.platform import platform_app

runner = CliRunner()


def invoke(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = runner.invoke(platform_app, list(args), input=stdin)
    return result.exit_code, result.output


def test_users_import_status_and_export(db_url: str, candidates: Path, tmp_path: Path) -> None:
    code, out = invoke("migrate", "--db", db_url)
    assert code == 0 and "revision" in out
    code, out = invoke("user", "add", "alice", "--role", "annotator", "--discipline", "Biology",
                       "--discipline", "Neuroscience", "--password-stdin", "--db", db_url, stdin="correct horse\n")  # fmt: skip
    assert code == 0 and "created annotator alice (Biology, Neuroscience)" in out
    code, out = invoke("user", "add", "bob", "--password-stdin", "--db", db_url, stdin="battery staple\n")
    assert code == 0 and "any discipline" in out
    code, out = invoke(
        "user",
        "add",
        "eve",
        "--role",
        "superuser",
        "--password-stdin",
        "--db",
        db_url,
        stdin="long enough pw\n",
    )
    assert code == 1 and "role must be one of annotator, adjudicator, admin" in out
    code, out = invoke("user", "add", "alice", "--password-stdin", "--db", db_url, stdin="another password\n")
    assert code == 1 and "already exists" in out
    code, out = invoke("user", "add", "short", "--password-stdin", "--db", db_url, stdin="abc\n")
    assert code == 1 and "at least 8 characters" in out

    code, out = invoke("import", str(candidates), "--db", db_url)
    assert code == 0, out
    assert "11 new item(s)" in out and "2 experiment(s), 2 segment(s)" in out
    assert "lack two eligible annotators" in out  # Chemistry has no annotator at all
    report = tmp_path / "import-2.json"
    code, out = invoke("import", str(candidates), "--db", db_url, "--report", str(report))
    assert code == 0 and "0 new item(s), 11 already present" in out and "identity: directory" in out
    data = json.loads(report.read_text())
    assert data["counts"]["unchanged"] == 11 and data["exit_code"] == 0 and len(data["items"]) == 11
    code, out = invoke("import", str(candidates), "--db", db_url, "--json")
    assert code == 0 and json.loads(out)["counts"]["unchanged"] == 11

    code, out = invoke("status", "--db", db_url)
    assert code == 0 and "items left: 11" in out and "Biology" in out

    export = tmp_path / "export"
    code, out = invoke("export", str(export), "--db", db_url)
    assert code == 0 and "exported 0 verified item(s)" in out and "do not publish" in out
    assert json.loads((export / "dataset.json").read_text())["total_items"] == 0
    internal = tmp_path / "export-INTERNAL-do-not-publish"
    assert json.loads((internal / "verification.json").read_text())["total_items"] == 0
    code, out = invoke("export", str(export), "--db", db_url)
    assert code == 1 and "not empty" in out
    code, out = invoke("export", str(tmp_path / "team"), "--no-public", "--db", db_url)
    assert code == 0 and (tmp_path / "team" / "provenance.jsonl").is_file() and "names original files" in out

    code, out = invoke("token", "create", "bob", "--name", "nightly sync", "--read-only", "--db", db_url)
    assert code == 0, out
    token = out.strip().splitlines()[-1]
    assert token.startswith("evp_") and len(token) > 40
    code, out = invoke("token", "list", "--db", db_url)
    assert code == 0 and "nightly sync" in out and token not in out and token[:10] in out
    code, out = invoke("token", "revoke", "1", "--db", db_url)
    assert code == 0 and "revoked token 1" in out
    code, out = invoke("token", "revoke", "99", "--db", db_url)
    assert code == 1 and "not found" in out

    code, out = invoke("user", "list", "--db", db_url)
    assert code == 0 and "alice" in out and "bob" in out
    code, out = invoke("user", "deactivate", "bob", "--db", db_url)
    assert code == 0
    code, out = invoke("user", "deactivate", "nobody", "--db", db_url)
    assert code == 1 and "no user 'nobody'" in out


def test_import_reports_bad_lines_and_imports_nothing(db_url: str, candidates: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(candidates, broken)
    (broken / "annotations" / "level1" / "materials.jsonl").write_text('{"id": 1, "question": "q"}\n')
    tools = broken / "annotations" / "level1" / "tools.jsonl"
    good = tools.read_text().splitlines()
    record, n = json.loads(good[0]), len(good)
    nul_question = {**record, "id": 21, "question": "Which tool\x00 is used?"}
    nul_option = {**record, "id": 22, "options": {**record["options"], "B": "flask\x00"}}
    nul_video = {**record, "id": 23, "video_id": "E1\x00"}
    lines = [json.dumps(r).encode() for r in (nul_question, nul_option, nul_video)]
    experiments = broken / "experiments.jsonl"
    experiments.write_text(experiments.read_text() + '{"video_id": "E9", "duration": NaN}\n')
    tools.write_bytes(tools.read_bytes() + b'{"id": 24, "question": "caf\xe9"}\n' + b"\n".join(lines) + b"\n")
    paper = broken / "papers" / "E1.md"
    paper.write_bytes(b"# Methods\n\nWe incubate at 37\xb0C.\n")
    report = tmp_path / "refused.json"
    for args in ((), ("--json",), ("--json", "--report", str(report))):
        code, out = invoke("import", str(broken), "--db", db_url, *args)
        assert code == 1 and "Traceback" not in out
        flat = out.replace("\n", "")
        assert "materials.jsonl:1:" in flat and "video_path" in out
        assert f"tools.jsonl:{n + 1}: not valid UTF-8 (byte 0xe9 at column 28)" in flat
        assert f"tools.jsonl:{n + 2}: question contains a NUL character" in flat
        assert f"tools.jsonl:{n + 3}: options.B contains a NUL character" in flat
        assert f"tools.jsonl:{n + 4}: video_id contains a NUL character" in flat
        assert "E1.md:3: not valid UTF-8 (byte 0xb0)" in flat
        assert "experiments.jsonl:" in flat and "duration is NaN or infinite" in flat
        if "--json" in args:  # nothing but the report, with its problems
            data = json.loads(out)
            assert data["imported"] is False and data["exit_code"] == 1
            assert sum(1 for p in data["problems"] if "tools.jsonl" in p or "E1.md" in p or "NaN" in p) == 6
    assert json.loads(report.read_text())["problems"] == data["problems"]
    code, out = invoke("status", "--db", db_url)
    assert "items left: 0" in out
    # Not a candidate directory at all: still a report.
    code, out = invoke("import", str(tmp_path / "nowhere"), "--db", db_url, "--json", "--report", str(report))
    assert code == 1 and "not a directory" in json.loads(out)["refused"]
    assert json.loads(report.read_text())["imported"] is False
    code, out = invoke("import", str(broken), "--db", db_url, "--skip-bad", "--report", str(report))
    assert code == 0 and "new item(s)" in out and "skipped:" in out
    assert json.loads(report.read_text())["problems"] == data["problems"]


def test_people_commands(db_url: str, candidates: Path) -> None:
    for name, role, discipline in (("ann", "annotator", "Biology"), ("ben", "annotator", "Biology"),
                                   ("cat", "annotator", "Biology"), ("boss", "admin", "")):  # fmt: skip
        extra = ["--discipline", discipline] if discipline else []
        code, out = invoke("user", "add", name, "--role", role, *extra, "--password-stdin", "--db", db_url,
                           stdin="a long password\n")  # fmt: skip
        assert code == 0, out
    assert invoke("import", str(candidates), "--db", db_url)[0] == 0
    code, out = invoke("user", "deactivate", "ben", "--db", db_url)
    assert code == 0 and "deactivated ben:" in out and "returned to the pool" in out and "reassigned" in out
    code, out = invoke("user", "reassign", "cat", "--reason", "on leave", "--db", db_url)
    assert code == 0 and "returned to the pool" in out and "still short of annotators" in out
    code, out = invoke("user", "activate", "ben", "--db", db_url)
    assert code == 0 and "activated ben" in out
    code, out = invoke("user", "edit", "ann", "--role", "adjudicator", "--db", db_url)
    assert code == 0 and "updated ann" in out
    code, out = invoke("user", "edit", "boss", "--role", "annotator", "--db", db_url)
    assert code == 1 and "last active admin" in out
    code, out = invoke("user", "edit", "cat", "--any-discipline", "--db", db_url)
    assert code == 0
    code, out = invoke("user", "list", "--db", db_url)
    assert "adjudicator" in out and "any" in out
    code, out = invoke("user", "passwd", "ben", "--password-stdin", "--db", db_url, stdin="short\n")
    assert code == 1 and "at least 8 characters" in out
    code, out = invoke(
        "user", "passwd", "ben", "--password-stdin", "--db", db_url, stdin="another long one\n"
    )
    assert code == 0 and "new password set for ben" in out
    code, out = invoke(
        "user", "passwd", "nobody", "--password-stdin", "--db", db_url, stdin="another long one\n"
    )
    assert code == 1 and "no user 'nobody'" in out


def test_import_exits_3_when_items_are_left_unapplied(db_url: str, candidates: Path, tmp_path: Path) -> None:
    from platform_batches import next_batch, redraft, with_uids

    first = with_uids(candidates, tmp_path / "batch1")
    assert invoke("import", str(first), "--db", db_url)[0] == 0
    second = next_batch(first, tmp_path / "batch2")
    redraft(
        second, "tools/E1-tool1", video_id="E2", category="Chemistry"
    )  # the uid now names another experiment
    code, out = invoke("import", str(second), "--db", db_url, "--json")
    assert code == 3
    data = json.loads(out)
    conflict = next(i for i in data["items"] if i["outcome"] == "conflict")
    assert (
        conflict["release_key"] == "tools/E1-tool1"
        and "of experiment E1 on the platform" in conflict["reason"]
    )
    assert data["counts"]["conflict"] == 1 and data["counts"]["unchanged"] == 10
    code, out = invoke("import", str(second), "--db", db_url)
    assert code == 3 and "conflict:" in out and "not applied" in out


def _expvid(*args: str, stdin: str | None) -> subprocess.CompletedProcess[str]:
    """`expvid ...` as a script runs it: a child process whose standard input is a pipe, no terminal."""
    env = {**os.environ, "COLUMNS": "40"}
    return subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", *args],
        input=stdin if stdin is not None else "", capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_user_add_as_documented_runs_without_a_terminal(tmp_path: Path) -> None:
    """The README's `user add` with the password piped in (`--password-stdin`), as a setup script
    or CI job runs it; without the option and without a terminal, one clear line says what to do."""
    from sqlalchemy import select

    from expvid.platform import open_database
    from expvid.platform.config import PasswordPolicy
    from expvid.platform.db.models import User
    from expvid.platform.security.passwords import Passwords

    db = f"sqlite:///{tmp_path / 'platform.db'}"
    base = ["platform", "user", "add", "alice", "--role", "annotator", "--discipline", "Biology", "--db", db]
    refused = _expvid(*base, stdin="correct horse battery\n")  # no terminal, no --password-stdin
    assert refused.returncode == 2, refused.stderr
    said = " ".join(refused.stderr.split())
    assert (
        "no terminal to ask for the password on" in said
        and "| expvid platform user add alice --password-stdin" in said
    )
    empty = _expvid(*base, "--password-stdin", stdin="")
    assert empty.returncode == 2 and "standard input held no password" in " ".join(empty.stderr.split())
    created = _expvid(*base, "--password-stdin", stdin="correct horse battery\n")
    assert created.returncode == 0, created.stderr
    assert "created annotator alice (Biology)" in " ".join(created.stdout.split())
    database = open_database(db)
    try:
        with database.read() as session:
            users = list(session.scalars(select(User)))
    finally:
        database.dispose()
    assert [user.username for user in users] == ["alice"]  # the refused attempts created nothing
    assert Passwords(PasswordPolicy()).verify(users[0].password_hash, "correct horse battery")
