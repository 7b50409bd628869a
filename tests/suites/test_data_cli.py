"""`expvid data check` / `validate`: a table per task, problems as file:line: message, exit codes.

The terminal is left as the environment has it (the suite runs with COLUMNS=40 too): rows of the
table are found by their cells, and messages must stay whole lines whatever the width.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.expvid_suite import TASKS


def _invoke(*args: str, command: str = "validate") -> tuple[int, str]:
    result = CliRunner().invoke(app, ["data", command, *args])
    return result.exit_code, result.output


def _rows(output: str) -> dict[str, list[str]]:
    rows = {}
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if len(cells) >= 5 and cells[0]:
            rows[cells[0]] = cells
    return rows


def test_validate_reports_every_task_of_a_clean_release(sample_dir: Path) -> None:
    code, output = _invoke(str(sample_dir), "--strict")
    assert code == 0, output
    rows = _rows(output)
    assert set(TASKS) <= set(rows)
    records = [
        json.loads(line) for line in (sample_dir / TASKS["tools"].path).read_text("utf-8").splitlines()
    ]
    # task, level, records, items, invalid, media missing, media unreadable
    assert rows["tools"] == ["tools", "1", str(len(records)), str(len(records)), "0", "0", "0"]
    assert "fingerprint " in output and "no problems" in output


def test_validate_lists_problems_and_fails_only_when_strict(sample_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "release"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    path = root / TASKS["step_prediction"].path
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:40]  # truncate line 3: bad JSON
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, output = _invoke(str(root), "--no-check-media")
    assert code == 0
    assert any(line.startswith(f"{path.resolve()}:3: not valid JSON") for line in output.splitlines())
    assert _rows(output)["step_prediction"][2:5] == [str(len(lines)), str(len(lines) - 1), "1"]

    code, output = _invoke(str(root), "--no-check-media", "--strict", "--tasks", "step_prediction,tools")
    assert code == 1
    assert any(line.startswith(f"{path.resolve()}:3: not valid JSON") for line in output.splitlines())
    assert "materials" not in output  # only the requested tasks

    code, output = _invoke(str(root), "--tasks", "tools")  # media checked: no videos in the copy
    assert code == 0
    tools = len((root / TASKS["tools"].path).read_text().splitlines())
    assert _rows(output)["tools"][2:6] == [str(tools), str(tools), "0", str(tools)]
    missing = [line for line in output.splitlines() if ": missing (needed by" in line]
    assert missing and all(line.startswith(str(root.resolve() / "videos")) for line in missing)


def test_validate_rejects_unusable_input(tmp_path: Path) -> None:
    code, output = _invoke(str(tmp_path / "missing"))
    assert code == 2 and "not a directory" in output
    code, output = _invoke(str(tmp_path), "--tasks", "nonsense")
    assert code == 2 and "unknown ExpVid task 'nonsense'" in output


def test_decode_finds_a_damaged_middle_that_reading_packets_cannot(sample_dir: Path, tmp_path: Path) -> None:
    """Bytes overwritten mid-file (a bad sector, a transfer that kept the size): every packet is
    there, so `--media read` (the default) passes; only decoding finds it, as `eval` would."""
    import random

    root = tmp_path / "release"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", root / "videos")
    # Clean videos decode clean, four files at a time (no picture is ever lost between decoders).
    code, output = _invoke(str(root), "--media", "decode", command="check")
    assert code == 0, output
    first = json.loads((root / TASKS["tools"].path).read_text("utf-8").splitlines()[0])
    damaged = root / first["video_path"]
    size = damaged.stat().st_size
    with damaged.open("r+b") as handle:
        handle.seek(size // 2)
        handle.write(random.Random(7).randbytes(size // 12))
    assert damaged.stat().st_size == size
    code, output = _invoke(str(root), "--tasks", "tools", command="check")
    assert code == 0, output
    assert "media read: packets, not decoded (--media decode decodes every frame)" in " ".join(output.split())
    code, output = _invoke(str(root), "--tasks", "tools", "--media", "decode", command="check")
    assert code == 1, output
    problem = next(line for line in output.splitlines() if line.startswith(str(damaged)))
    assert ": decoding frame " in problem and "failed: Invalid data found" in problem
    records = [json.loads(line) for line in (root / TASKS["tools"].path).read_text("utf-8").splitlines()]
    users = sum(record["video_path"] == first["video_path"] for record in records)
    assert _rows(output)["tools"][6] == str(users)  # the items of that clip: media unreadable
