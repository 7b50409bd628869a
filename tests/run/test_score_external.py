"""`expvid score --data DIR --predictions FILE --out DIR`: no model, no video decoding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app

runner = CliRunner()


def _records(sample_dir: Path, task: str, level: int) -> list[dict]:
    path = sample_dir / f"annotations/level{level}/{task}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_scores_external_predictions_without_touching_videos(sample_dir, tmp_path):
    tools = _records(sample_dir, "tools", 1)
    generation = _records(sample_dir, "sequence_generation", 2)
    rows = [{"id": r["id"], "task": "tools", "response": f"\\boxed{{{r['answer']}}}"} for r in tools]
    rows += [
        {"id": f"sequence_generation/{r['id']}", "response": "\\boxed{" + ", ".join(r["answer"]) + "}"}
        for r in generation
    ]
    predictions = _write(tmp_path / "preds.jsonl", rows)
    out = tmp_path / "scored"
    result = runner.invoke(
        app,
        ["score", "--data", str(sample_dir), "--predictions", str(predictions), "--out", str(out), "--quiet"],
    )
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    assert scores["tasks"]["tools"]["score"] == 100.0 and scores["tasks"]["tools"]["n"] == len(tools)
    assert scores["tasks"]["sequence_generation"]["score"] == 100.0
    assert scores["run"]["model"] == "external:preds.jsonl"
    assert "| Tool |" in result.output


def test_ambiguous_and_unknown_ids_are_reported_with_their_line(sample_dir, tmp_path):
    first_tool = _records(sample_dir, "tools", 1)[0]
    rows = [
        {"id": first_tool["id"], "response": "\\boxed{A}"},  # the same raw id exists in every task
        {"id": "tools/999999", "response": "\\boxed{A}"},
    ]
    predictions = tmp_path / "preds.jsonl"
    _write(predictions, rows)
    with predictions.open("a") as handle:
        handle.write("{not json\n")
    result = runner.invoke(
        app,
        ["score", "--data", str(sample_dir), "--predictions", str(predictions), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 2
    message = " ".join(result.output.split())
    assert f"{predictions.name}:1" in message.replace("\n", "") or "preds.jsonl:1" in message
    assert "ambiguous" in message and "preds.jsonl:2" in message and "preds.jsonl:3" in message
    assert not (tmp_path / "o" / "scores.json").exists()


@pytest.mark.parametrize("response", [None, "I am not sure."])
def test_missing_or_unparseable_answers_count_as_such(sample_dir, tmp_path, response):
    tools = _records(sample_dir, "tools", 1)[:4]
    rows = [{"id": r["id"], "task": "tools", "response": response} for r in tools]
    predictions = _write(tmp_path / "preds.jsonl", rows)
    out = tmp_path / "scored"
    result = runner.invoke(
        app,
        ["score", "--data", str(sample_dir), "--predictions", str(predictions), "--out", str(out), "--quiet"],
    )
    # As `expvid eval`: records without a model answer make exit status 3; unparseable ones are answers.
    assert result.exit_code == (3 if response is None else 0), result.output
    task = json.loads((out / "scores.json").read_text())["tasks"]["tools"]
    assert task["score"] == 0.0 and task["n"] == 4
    if response is None:
        assert task["n_failed"] == 4
    else:
        assert task["n_unparseable"] == 4
