"""A platform command whose database cannot be reached fails in one line naming why, not a traceback.

The README's deployment blocks name `postgresql://review@db/expvid`; a newcomer without that server
used to get SQLAlchemy's and psycopg's whole traceback.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.platform import platform_app


def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("command", [["status"], ["user", "list"], ["export", "out/"]])
def test_an_unreachable_postgresql_server_is_one_line(command: list[str], tmp_path: Path) -> None:
    url = f"postgresql://review:secret@127.0.0.1:{_closed_port()}/expvid"
    result = CliRunner().invoke(platform_app, [*command, "--db", url])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith("error: cannot use the database (--db or $EXPVID_PLATFORM_DB): ")
    assert "Connection refused" in lines[0] or "connection failed" in lines[0]


def test_a_sqlite_file_in_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'no-such-folder' / 'review.db'}"
    result = CliRunner().invoke(platform_app, ["status", "--db", url])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "unable to open database file" in lines[0]


def test_a_database_url_that_does_not_parse_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(platform_app, ["export", str(tmp_path / "out"), "--db", "review.db"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert "Could not parse SQLAlchemy URL" in lines[0] and "sqlite:///file.db" in lines[0]


def test_other_errors_are_not_taken_for_a_database_failure(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        platform_app, ["import", str(tmp_path / "missing"), "--db", f"sqlite:///{tmp_path / 'r.db'}"]
    )
    assert "cannot use the database" not in result.output and result.exit_code != 0
