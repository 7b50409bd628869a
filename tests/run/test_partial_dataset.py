"""A partial, hand-damaged dataset on disk: nothing is dropped, everything is counted and said.

The sample release is copied and damaged the way downloads and hand edits damage real ones: a
video deleted (partial download), a video cut in half (interrupted copy), a line that is not JSON,
an answer that is not among the options. `expvid data check` lists each with counts before a run;
`expvid eval` keeps every record in the denominator (media failures and invalid records scored 0),
writes everything, labels the problems in every report, and exits 3 (0 with --allow-failures).
When the missing videos arrive, the same command resumes and retries exactly those items.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app

runner = CliRunner()
TOOLS = "annotations/level1/tools.jsonl"


@pytest.fixture
def damaged(sample_dir: Path, tmp_path: Path) -> dict[str, object]:
    root = tmp_path / "a partial [download]"  # a space and brackets: paths are data, not markup
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", root / "videos")
    path = root / TOOLS
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    records[4]["answer"] = "Z"  # line 6 (after the insert below): the answer is not among the options
    deleted, cut = root / records[7]["video_path"], root / records[10]["video_path"]
    saved = {deleted: deleted.read_bytes(), cut: cut.read_bytes()}
    deleted.unlink()  # line 9: a partial download
    cut.write_bytes(saved[cut][: len(saved[cut]) // 2])  # line 12: an interrupted copy
    lines = [json.dumps(record) for record in records]
    lines.insert(2, '{"id": 99, "video_path": ')  # line 3: not JSON
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {
        "root": root,
        "path": path,
        "n_records": len(lines),
        "saved": saved,
        "deleted": deleted,
        "cut": cut,
    }


def _eval(root: Path, out: Path, *extra: str) -> tuple[int, str]:
    args = ["eval", "--data", str(root), "--model", "random", "--out", str(out), "--tasks", "tools",
            "--frames", "L1=2", "--size", "32", "--no-cache", "--quiet", *extra]  # fmt: skip
    result = runner.invoke(app, args)
    return result.exit_code, result.output


def test_data_check_lists_every_problem_with_counts(damaged: dict[str, object]) -> None:
    root, path = damaged["root"], damaged["path"]
    result = runner.invoke(app, ["data", "check", str(root), "--tasks", "tools"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    row = next(line for line in lines if line.startswith("│ tools"))
    # task, level, records, items, invalid, media missing, media unreadable
    assert [cell.strip() for cell in row.split("│")[1:-1]] == ["tools", "1", "19", "17", "2", "1", "1"]

    assert f"{path}:3: not valid JSON (Expecting value at column 26)" in lines
    assert f"{path}:6: answer 'Z' is not one of the options ['A', 'B', 'C', 'D']" in lines
    assert f"{damaged['deleted']}: missing (needed by 1 item(s))" in lines
    assert any(line.startswith(f"{damaged['cut']}: ") and "(needed by 1 item(s))" in line for line in lines)
    assert lines[-1].startswith("2 invalid record(s); 1 media file(s) missing; 1 media file(s) unreadable.")

    presence_only = runner.invoke(app, ["data", "check", str(root), "--tasks", "tools", "--media", "exists"])
    row = next(line for line in presence_only.output.splitlines() if line.startswith("│ tools"))
    assert [cell.strip() for cell in row.split("│")[1:-1]][5:] == ["1", "0"]  # the cut file is there


def test_eval_counts_every_record_and_resumes_when_the_videos_arrive(
    damaged: dict[str, object], tmp_path: Path
) -> None:
    root, n_records = damaged["root"], damaged["n_records"]
    out = tmp_path / "run"
    code, output = _eval(root, out)
    assert code == 3, output
    scores = json.loads((out / "scores.json").read_text())
    tools = scores["tasks"]["tools"]
    assert tools["n_records"] == n_records and tools["n"] == n_records  # nothing left the denominator
    assert tools["n_invalid"] == 2 and tools["failed_by_kind"] == {"media": 2} and tools["n_failed"] == 2
    assert scores["run"]["n_records"] == n_records and scores["run"]["complete"] is True
    assert scores["run"]["partial"].startswith("1 of 10 tasks (materials, ")
    assert scores["run"]["media_fingerprinted"] is True
    lines = [json.loads(line) for line in (out / "item_scores.jsonl").read_text().splitlines()]
    assert len(lines) == n_records
    invalid = [line for line in lines if line["status"] == "invalid"]
    assert {line["item_id"] for line in invalid} == {
        "tools/invalid@tools.jsonl:3",
        "tools/invalid@tools.jsonl:6",
    }
    assert all(line["earned"] == 0 and line["error_kind"] == "invalid" for line in invalid)
    media = [line for line in lines if line["error_kind"] == "media"]
    assert len(media) == 2 and all(line["earned"] == 0 and line["status"] == "failed" for line in media)
    # Said before the run and under the table, one line each, whatever the terminal width.
    out_lines = output.splitlines()
    assert (
        f"invalid record (task tools; counted, scored 0): {damaged['path']}:6: answer 'Z' is not one of the options ['A', 'B', 'C', 'D']"
        in out_lines
    )
    assert any(line.startswith("1 media file(s) missing (e.g. ") for line in out_lines)
    assert "- random (partial): 2 failed item(s) scored 0 (media 2; by task: tools 2)" in out_lines
    assert (
        "- random (partial): 2 invalid record(s) in the task files scored 0 (by task: tools 2)" in out_lines
    )
    assert (
        "4 record(s) scored 0 without a model answer (see the notes above); exit status 3 (--allow-failures for 0)"
        in out_lines
    )
    first_fingerprint = scores["run"]["dataset_fingerprint"]

    code, output = _eval(root, out, "--allow-failures")
    assert code == 0, output

    for file, data in damaged["saved"].items():  # type: ignore[attr-defined]
        file.write_bytes(data)  # the rest of the download arrives
    code, output = _eval(root, out)
    assert code == 3, output  # the invalid records are still there
    assert "note: 1 media file(s) missing when the run started are now present" in output
    assert (
        "note: 1 media file(s) changed size since the run started, none with answers made from it" in output
    )
    scores = json.loads((out / "scores.json").read_text())
    tools = scores["tasks"]["tools"]
    assert tools["failed_by_kind"] == {} and tools["n_invalid"] == 2 and tools["n"] == n_records
    assert scores["run"]["dataset_fingerprint"] != first_fingerprint
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 17 + 2 + 2  # three passes; only the two media failures were redone


def test_a_limit_counts_records_not_items(damaged: dict[str, object], tmp_path: Path) -> None:
    out = tmp_path / "limited"
    code, output = _eval(damaged["root"], out, "--limit", "4", "--allow-failures")  # type: ignore[arg-type]
    assert code == 0, output
    tools = json.loads((out / "scores.json").read_text())["tasks"]["tools"]
    assert (tools["n_records"], tools["n"], tools["n_invalid"]) == (4, 4, 1)  # line 3 is one of the first 4
    assert "random (partial)" in output
