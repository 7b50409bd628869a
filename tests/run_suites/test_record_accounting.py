"""Every suite keeps every record in the denominator: damaged SciVideoBench, ProMQA and SFE releases.

SciVideoBench: a missing video and an answer not among the options in its one JSON Lines file are
scored 0 in their question type and counted; a line that is not JSON is counted in no task (its
question type is unknown) but still reported. ProMQA: a JSON array cut short hides how many
examples it had, so the run is refused before any work. SFE: a missing image and a malformed
record are listed by `expvid data check` with counts per task.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.schema import DataError
from expvid.suites.scivideobench.spec import QUESTION_TYPES

runner = CliRunner()


def _rows(output: str) -> dict[str, list[str]]:
    cells = ([c.strip() for c in line.split("│")[1:-1]] for line in output.splitlines())
    return {row[0]: row for row in cells if len(row) == 7 and row[0]}


def test_scivideobench_missing_video_and_bad_records_are_counted(svb_sample: Path, tmp_path: Path) -> None:
    root = tmp_path / "svb"
    shutil.copytree(svb_sample, root)
    path = root / "scivideobench_1k.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    task = QUESTION_TYPES[records[0]["question_type"]]
    records[0]["answer"] = "Z"
    lost = next(r for r in records[1:] if QUESTION_TYPES[r["question_type"]] == task)
    (root / "videos" / f"jove_{lost['video_id']}.mp4").unlink()
    path.write_text("\n".join([*map(json.dumps, records), "{oops"]) + "\n")
    uses_lost = _per_task([r for r in records[1:] if r["video_id"] == lost["video_id"]])

    check = runner.invoke(app, ["data", "check", str(root), "--suite", "scivideobench", "--media", "exists"])
    assert check.exit_code == 1
    assert _rows(check.output)[task][4:6] == ["1", str(uses_lost[task])]  # invalid, items without video
    assert "1 of them of unknown task" in check.output

    config = EvalConfig(
        suite="scivideobench", data=root, model="random", out=tmp_path / "run", cache_dir=None
    )
    result = asyncio.run(evaluate(config, command=["test"], show_progress=False))
    scores = result.scores
    per_task = {name: records for name, records in _per_task(records).items()}
    for name, summary in scores.tasks.items():
        assert summary.n_records == per_task[name] and summary.n == per_task[name]
    assert scores.tasks[task].n_invalid == 1
    for name, n in uses_lost.items():
        assert scores.tasks[name].failed_by_kind == {"media": n}
    assert scores.run.n_invalid_unknown_task == 1 and result.n_problems == 2 + sum(uses_lost.values())


def _per_task(records: list[dict[str, object]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in records:
        name = QUESTION_TYPES[str(record["question_type"])]
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_promqa_examples_cut_short_are_refused_before_any_work(promqa_sample: Path, tmp_path: Path) -> None:
    root = tmp_path / "promqa"
    shutil.copytree(promqa_sample, root)
    text = (root / "examples.json").read_text()
    (root / "examples.json").write_text(text[: len(text) // 2])  # an interrupted download
    out = tmp_path / "run"
    config = EvalConfig(suite="promqa", data=root, model="random", out=out, cache_dir=None)
    try:
        asyncio.run(evaluate(config, command=["test"], show_progress=False))
    except DataError as error:
        message = str(error)
    else:  # pragma: no cover - the assertion below explains
        message = ""
    assert message.startswith("cannot count the records of 1 file(s)")
    assert f"{root.resolve() / 'examples.json'}:" in message and "rest of the file skipped" in message
    assert not out.exists()


def test_sfe_missing_image_and_bad_record_are_listed(sfe_sample: Path, tmp_path: Path) -> None:
    root = tmp_path / "sfe"
    shutil.copytree(sfe_sample, root)
    path = next((root / "20250515-en").glob("*.jsonl"))
    records = [json.loads(line) for line in path.read_text().splitlines()]
    mcq = next(r for r in records if r["question_type"] == "mcq")
    mcq["options"] = ["A: only one"]
    image = next(r for r in records if r is not mcq)["images"][0]
    (root / image).unlink()
    path.write_text("\n".join(map(json.dumps, records)) + "\n")
    result = runner.invoke(app, ["data", "check", str(root), "--suite", "sfe"])
    assert result.exit_code == 1
    rows = _rows(result.output)
    assert rows["mcq"][4] == "1" and rows["total"][5] == str(sum(image in r["images"] for r in records))
    assert any(line.startswith(f"{root.resolve() / image}: missing") for line in result.output.splitlines())
