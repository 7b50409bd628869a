"""Labels and denominators: what a row is an average of is said wherever the row is shown.

Recreates what the README's own commands produce: a dataset root holding only some task files
(`expvid data fetch expvid DIR --tasks tools,materials`), two partial downloads of one release put
side by side by `expvid report`, and `expvid compare` of a `--limit` run against a full one.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app

runner = CliRunner()


def _subset(sample_dir: Path, root: Path, tasks: tuple[str, ...]) -> Path:
    """A dataset root as a partial fetch leaves it: only these tasks' files, and their videos."""
    for task in tasks:
        level = next(sample_dir.glob(f"annotations/level*/{task}.jsonl"))
        target = root / level.relative_to(sample_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(level, target)
        for line in level.read_text(encoding="utf-8").splitlines():
            video = json.loads(line)["video_path"]
            (root / video).parent.mkdir(parents=True, exist_ok=True)
            if not (root / video).exists():
                shutil.copy2(sample_dir / video, root / video)
    return root


def _eval(data: Path, out: Path, cache: Path, *extra: str) -> None:
    args = ["eval", "--data", str(data), "--out", str(out), "--model", "random", "--frames", "L1=2",
            "--size", "32", "--cache-dir", str(cache), "--quiet", *extra]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


def test_a_root_with_some_task_files_is_a_partial_run(
    sample_dir: Path, tmp_path: Path, frame_cache_dir
) -> None:
    root = _subset(sample_dir, tmp_path / "fetched", ("tools", "materials"))
    out = tmp_path / "run"
    _eval(root, out, frame_cache_dir)  # no --tasks: everything the root holds
    partial = json.loads((out / "scores.json").read_text())["run"]["partial"]
    assert partial == (
        "2 of 10 tasks (quantity, operation, sequence_ordering, sequence_generation, video_verification, "
        "step_prediction, experimental_conclusion, scientific_discovery not in the dataset)"
    )
    report = runner.invoke(app, ["report", str(out), "--reference", "all"])
    assert report.exit_code == 0, report.output
    row = next(line for line in report.output.splitlines() if line.startswith("| **random"))
    assert row.startswith("| **random (partial)**")
    assert "the published rows cover all of it" in report.output

    chosen = tmp_path / "run-tools"
    _eval(root, chosen, frame_cache_dir, "--tasks", "tools")
    partial = json.loads((chosen / "scores.json").read_text())["run"]["partial"]
    assert partial.startswith("1 of 10 tasks (materials, quantity, operation, ")
    assert partial.endswith("scientific_discovery left out)")


def test_a_full_root_is_not_partial(sample_dir: Path, tmp_path: Path, frame_cache_dir) -> None:
    out = tmp_path / "run"
    _eval(sample_dir, out, frame_cache_dir, "--model", "first-option")
    assert json.loads((out / "scores.json").read_text())["run"]["partial"] is None


@pytest.fixture
def two_downloads(sample_dir: Path, tmp_path: Path, frame_cache_dir) -> tuple[Path, Path]:
    """Two runs of the same tasks on two partial downloads: a different video missing in each."""
    runs = []
    for name, missing in (("a", 0), ("b", 1)):
        root = _subset(sample_dir, tmp_path / f"download-{name}", ("tools",))
        records = [
            json.loads(line) for line in (root / "annotations/level1/tools.jsonl").read_text().splitlines()
        ]
        videos = list(dict.fromkeys(record["video_path"] for record in records))
        (root / videos[missing]).unlink()
        out = tmp_path / f"run-{name}"
        args = ["eval", "--data", str(root), "--out", str(out), "--model", "first-option", "--tasks", "tools",
                "--frames", "L1=2", "--size", "32", "--cache-dir", str(frame_cache_dir), "--quiet",
                "--allow-failures"]  # fmt: skip
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        runs.append(out)
    return runs[0], runs[1]


def test_report_says_under_the_table_that_runs_were_made_on_different_media(
    two_downloads: tuple[Path, Path], tmp_path: Path
) -> None:
    run_a, run_b = two_downloads
    compared = runner.invoke(app, ["compare", str(run_a), str(run_b)])
    assert compared.exit_code == 2 and "different media" in compared.output  # compare refuses

    html, table = tmp_path / "r.html", tmp_path / "r.csv"
    result = runner.invoke(app, ["report", str(run_a), str(run_b), "--html", str(html), "--csv", str(table)])
    assert result.exit_code == 0, result.output
    note = next(line for line in result.output.splitlines() if "DIFFERENT media" in line)
    assert note.startswith("- runs made on DIFFERENT media")
    assert "(run-a)" in note and "(run-b)" in note  # names both rows
    assert "DIFFERENT media" in html.read_text()
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert len(rows) == 2 and all("DIFFERENT media" in row["table notes"] for row in rows)
    assert rows[0]["dataset fingerprint"] != rows[1]["dataset fingerprint"]

    alone = runner.invoke(app, ["report", str(run_a), str(run_a)])
    assert alone.exit_code == 0 and "DIFFERENT" not in alone.output


def test_compare_counts_items_and_videos_per_task(sample_dir: Path, tmp_path: Path, frame_cache_dir) -> None:
    limited, full = tmp_path / "limited", tmp_path / "full"
    tasks = ("--tasks", "tools,operation")
    _eval(sample_dir, limited, frame_cache_dir, *tasks, "--limit", "5")
    _eval(sample_dir, full, frame_cache_dir, *tasks, "--model", "first-option")
    result = runner.invoke(app, ["compare", str(limited), str(full), "--n-boot", "50"])
    assert result.exit_code == 0, result.output
    items = {
        task: [json.loads(line) for line in (limited / "item_scores.jsonl").read_text().splitlines()
               if json.loads(line)["task"] == task]
        for task in ("tools", "operation")
    }  # fmt: skip
    statistics = result.output.split("\n\n")[0].splitlines()  # the first table: one row per statistic
    rows = {line.split("|")[1].strip(): line.split("|") for line in statistics if line.startswith("| ")}
    for task, scores in items.items():
        videos = {score["video_id"] for score in scores}
        assert [cell.strip() for cell in rows[task][-3:-1]] == [str(len(scores)), str(len(videos))]
    level = rows["L1"]
    assert level[-3].strip() == "10"  # the level row counts its tasks' items: 5 + 5
