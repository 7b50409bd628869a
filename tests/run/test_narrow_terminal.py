"""Messages stay whole lines on a 40-column terminal, however long the paths they name.

People grep logs for `file:line` and paste paths into editors; a message hard-wrapped at the
terminal width breaks both. The CLI runs in a child process with COLUMNS=40 (consoles read the
width when they are made), under a directory whose path alone is longer than the terminal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.run.config import spec_url_problem

TOOLS = "annotations/level1/tools.jsonl"


def expvid(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "40", "LINES": "20"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    path = tmp_path / ("a much longer directory name than the terminal is wide " * 2).strip() / "x"
    path.mkdir(parents=True)
    assert len(str(path)) > 100
    return path


def test_errors_and_problems_naming_long_paths_are_single_lines(sample_dir: Path, deep: Path) -> None:
    missing = deep / "no such release"
    result = expvid("data", "check", str(missing), cwd=deep)
    assert result.returncode == 2
    assert (
        f"error: {missing}: not a directory (expected an ExpVid release root)" in result.stderr.splitlines()
    )

    root = deep / "release"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    path = root / TOOLS
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[1])
    record["answer"] = "Z"
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    check = expvid("data", "check", str(root), "--tasks", "tools", "--media", "none", cwd=deep)
    assert check.returncode == 1, check.stderr
    problem = f"{path}:2: answer 'Z' is not one of the options {sorted(record['options'])}"
    assert problem in check.stdout.splitlines()
    row = next(line for line in check.stdout.splitlines() if line.startswith("│ tools "))
    assert [cell.strip() for cell in row.split("│")[1:-1]][:5] == [
        "tools",
        "1",
        str(len(lines)),
        str(len(lines) - 1),
        "1",
    ]
    assert f"dataset {root}" in check.stdout.splitlines()

    out = deep / "run"
    run = expvid(
        "eval", "--data", str(root), "--model", "random", "--out", str(out), "--tasks", "tools", "--limit", "3",
        "--quiet", "--no-cache", cwd=deep,
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    assert f"invalid record (task tools; counted, scored 0): {problem}" in run.stderr.splitlines()


def test_usage_errors_are_single_lines(deep: Path) -> None:
    result = expvid(
        "eval", "--data", str(deep), "--model", "openai:m", "--out", str(deep / "run"), "--base-url",
        "localhost:8000/v1", cwd=deep,
    )  # fmt: skip
    assert result.returncode == 2
    expected = (
        "Error: Invalid value for --base-url: 'localhost:8000/v1' is not an http(s) URL; "
        "write the scheme, e.g. http://localhost:8000/v1"
    )
    assert expected in result.stderr.splitlines()
    assert not (deep / "run").exists()


def test_a_server_without_a_scheme_in_the_model_spec_is_refused(deep: Path) -> None:
    args = ["eval", "--data", str(deep), "--out", str(deep / "run"), "--model", "openai:qwen@gpu1:8000/v1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "'openai:qwen@gpu1:8000/v1' names the server 'gpu1:8000/v1' without a scheme" in result.output
    # A version after '@' (Vertex-style model names) is not a server.
    assert spec_url_problem("anthropic:claude-3-5-sonnet@20240620", "--model") is None
    assert not (deep / "run").exists()
