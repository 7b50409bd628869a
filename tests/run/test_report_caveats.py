"""What every report says beside the numbers: partial runs, answers cut by the token limit, counts.

A run with `--limit` is labelled "(partial)" in its row in Markdown (the terminal), CSV and HTML,
so it is never shown beside the paper's rows without that label; `finish_reason: length` answers
are recorded and counted per task; `expvid compare` shows how many items per task each run scored
and how many were compared.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply

runner = CliRunner()


def test_partial_and_truncated_runs_are_labelled_everywhere(
    sample_dir: Path, tmp_path: Path, frame_cache_dir
) -> None:
    lock, seen = threading.Lock(), {"n": 0}

    def cut_every_other(request: RecordedRequest) -> Reply:
        with lock:
            seen["n"] += 1
            odd = seen["n"] % 2
        return Reply.ok(
            "The answer is \\boxed{A}" if odd else "Let me think step by",
            finish_reason="stop" if odd else "length",
        )

    with LoopbackServer(cut_every_other) as server:
        out = tmp_path / "run"
        args = ["eval", "--data", str(sample_dir), "--out", str(out), "--model", f"openai:lb@{server.openai_base_url}",
                "--tasks", "tools,materials", "--limit", "4", "--frames", "L1=2", "--size", "32",
                "--cache-dir", str(frame_cache_dir), "--quiet"]  # fmt: skip
        result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    scores = json.loads((out / "scores.json").read_text())
    assert scores["run"]["n_truncated"] == 4
    assert sum(task["n_truncated"] for task in scores["tasks"].values()) == 4
    assert scores["run"]["partial"] == "at most 4 of up to 18 records per task (--limit); 2 of 10 tasks (" + (
        "quantity, operation, sequence_ordering, sequence_generation, video_verification, step_prediction, "
        "experimental_conclusion, scientific_discovery left out)"
    )
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert (
        sum((p.get("finish_reason") or p["meta"].get("finish_reason")) == "length" for p in predictions) == 4
    )

    label = "lb (partial)"  # the model's name; its spec in a footnote
    spec = f"openai:lb@{server.openai_base_url}"
    html, table = tmp_path / "r.html", tmp_path / "r.csv"
    report = runner.invoke(
        app, ["report", str(out), "--reference", "GPT-5", "--html", str(html), "--csv", str(table)]
    )
    assert report.exit_code == 0, report.output
    lines = report.output.splitlines()
    assert any(line.startswith(f"| **{label}** |") for line in lines)
    assert any(line.startswith("| _GPT-5") for line in lines)
    assert f"- lb: model `{spec}`" in lines
    assert any(
        line.startswith(f"- {label}: PARTIAL run (at most 4 of up to 18 records per task (--limit)")
        for line in lines
    )
    truncated = [line for line in lines if "cut by the token limit (finish_reason: length)" in line]
    assert len(truncated) == 1 and truncated[0].startswith(f"- {label}: 4 answer(s) cut by the token limit")
    assert (
        "Rows marked (partial) cover only part of the dataset; the published rows cover all of it."
        in report.output
    )
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    assert rows[0]["model"] == label and rows[0]["partial"].startswith("at most 4 of")
    assert rows[0]["model spec"] == spec
    assert rows[-1]["reference"] == "1" and rows[-1]["partial"] == ""
    page = html.read_text()
    assert label in page and "PARTIAL run" in page and "<b>partial run</b>" in page


def test_compare_shows_items_per_task(sample_dir: Path, tmp_path: Path, frame_cache_dir) -> None:
    runs = []
    for model, limit in (("random:1", "3"), ("first-option", "5")):
        out = tmp_path / model.replace(":", "_")
        args = ["eval", "--data", str(sample_dir), "--out", str(out), "--model", model, "--tasks", "tools",
                "--limit", limit, "--frames", "L1=2", "--size", "32", "--cache-dir", str(frame_cache_dir), "--quiet"]  # fmt: skip
        assert runner.invoke(app, args).exit_code == 0
        runs.append(str(out))
    result = runner.invoke(app, ["compare", *runs, "--n-boot", "50"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "| task | A: scored of records | B: scored of records | compared |" in lines
    assert "| tools | 3 of 3 | 5 of 5 | 3 |" in lines
    assert "- 2 item(s) scored by only one run are left out of the comparison" in lines
    assert any(
        line.startswith("- run A is partial (at most 3 of up to 18 records per task (--limit); 1 of 10 tasks")
        for line in lines
    )
