"""`expvid data validate`: a table per task, problems as file:line: message, exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.expvid_suite import TASKS


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["data", "validate", *args], terminal_width=200)
    return result.exit_code, result.output


def test_validate_reports_every_task_of_a_clean_release(sample_dir: Path) -> None:
    code, output = _invoke(str(sample_dir), "--strict")
    assert code == 0, output
    for task in TASKS:
        assert task in output
    rows = {line.split("│")[1].strip(): line for line in output.splitlines() if line.count("│") >= 5}
    tools_row = [cell.strip() for cell in rows["tools"].split("│")[1:-1]]
    records = [
        json.loads(line) for line in (sample_dir / TASKS["tools"].path).read_text("utf-8").splitlines()
    ]
    disciplines = len({record["category"] for record in records})
    # task, level, items, disciplines, problems
    assert tools_row == ["tools", "1", str(len(records)), str(disciplines), "0"]
    assert "fingerprint " in output


def test_validate_lists_problems_and_fails_only_when_strict(sample_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "release"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    path = root / TASKS["step_prediction"].path
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]  # truncate line 3: bad JSON
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, output = _invoke(str(root), "--no-check-media")
    assert code == 0
    assert f"{path.resolve()}:3: not valid JSON" in output

    code, output = _invoke(str(root), "--no-check-media", "--strict", "--tasks", "step_prediction,tools")
    assert code == 1
    assert f"{path.resolve()}:3: not valid JSON" in output
    assert "materials" not in output  # only the requested tasks

    code, output = _invoke(str(root), "--tasks", "tools")  # media checked: no videos in the copy
    assert code == 0
    assert output.count("video file not found: videos/level_1/") == 18


def test_validate_rejects_unusable_input(tmp_path: Path) -> None:
    code, output = _invoke(str(tmp_path / "missing"))
    assert code == 2 and "not a directory" in output
    code, output = _invoke(str(tmp_path), "--tasks", "nonsense")
    assert code == 2 and "unknown ExpVid task 'nonsense'" in output
