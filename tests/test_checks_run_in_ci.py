"""The checks (ruff check, ruff format --check, mypy) fail CI like a test, and pre-commit runs the same."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHECKS = [".venv/bin/ruff check", ".venv/bin/ruff format --check", ".venv/bin/mypy"]


def test_ci_runs_the_checks_after_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script  # a failing check stops CI with its status
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```bash\n", 1)[1].split("```", 1)[0].strip().splitlines()
    start = [line for line in block if not line.startswith("#")]  # its `# needs:` line is a comment
    assert len(start) == 2 and start[1].endswith(".venv/bin/python -m pytest")  # still two commands
    position = script.index(".venv/bin/python -m pytest")
    for check in CHECKS:
        assert check in script[position:], check


def test_pre_commit_runs_the_same_checks_with_the_pinned_tools() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    entries = [hook["entry"] for repo in config["repos"] for hook in repo["hooks"]]
    for check in CHECKS:
        assert any(entry.startswith(check) for entry in entries), check
    pins = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert "ruff==" in pins and "mypy==" in pins
