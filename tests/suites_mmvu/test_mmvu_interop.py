"""MMVU beside the other suites' tools: its Hub release fetched from a real (loopback) Hub, lmms-eval's
own `mmvu_val` logs scored item by item, and its table with the paper's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.hub import LoopbackHub
from expvid.hub.fetch import FetchRequest, fetch_release
from expvid.hub.sources import parse_hub_spec

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated_hf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    for name in (
        "HF_TOKEN",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "HF_ENDPOINT",
        "HUGGING_FACE_HUB_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)


def test_the_hub_release_fetches_only_the_selected_tasks_videos(mmvu_dir, tmp_path) -> None:
    files = {
        p.relative_to(mmvu_dir).as_posix(): p
        for p in mmvu_dir.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }
    assert (
        parse_hub_spec("hf:yale-nlp/MMVU") is not None and parse_hub_spec("hf:yale-nlp/MMVU").suite == "mmvu"
    )  # type: ignore[union-attr]
    with LoopbackHub() as hub:
        hub.commit("yale-nlp/MMVU", files)
        outcome = fetch_release(
            FetchRequest(
                suite="mmvu", out=tmp_path / "mmvu", tasks=["open_ended"], endpoint=hub.url, progress=False
            )
        )
    assert outcome.complete, outcome.problems
    fetched = sorted(
        p.relative_to(tmp_path / "mmvu").as_posix() for p in (tmp_path / "mmvu" / "videos").rglob("*.mp4")
    )
    assert fetched == [
        "videos/Art/0.mp4",
        "videos/Chemistry/0.mp4",
        "videos/Computer_Science/3.mp4",
        "videos/Law/2.mp4",
    ]
    assert outcome.record.verification.items == 4 and outcome.record.suite == "mmvu"


def test_lmms_evals_own_mmvu_logs_are_scored_item_by_item(mmvu_dir, mmvu_records, tmp_path, plain) -> None:
    """Lines as lmms-eval's `mmvu_process_results` logs them (0.4+: no document, the id in the metric)."""
    logdir = tmp_path / "logs" / "model"
    logdir.mkdir(parents=True)
    lines = []
    for doc_id, record in enumerate(reversed(mmvu_records)):  # another order than the file: ids decide
        reply = record["answer"] if record["question_type"] == "multiple-choice" else "I do not know"
        correct = int(reply == record["answer"])
        value = {"question_id": record["id"], "category": record["video"].split("/")[-2], "pred_answer": reply,
                 "answer": record["answer"], "correct": correct, "eval_method": "rule-based"}  # fmt: skip
        lines.append(
            {"doc_id": doc_id, "target": record["answer"], "filtered_resps": [reply], "accuracy": value}
        )
    (logdir / "20260101_000000_samples_mmvu_val.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    out = tmp_path / "compared"
    result = runner.invoke(
        app, ["score", "--from", "lmms-eval", str(tmp_path / "logs"), "--data", str(mmvu_dir), "--suite", "mmvu",
              "--out", str(out), "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "lmms_eval_comparison.jsonl").read_text().splitlines()]
    assert {row["item"] for row in rows} == {record["id"] for record in mmvu_records}
    assert all(row["agree"] for row in rows)  # a bare letter and "I do not know" read the same both ways
    # No results.json beside these samples: lmms-eval's column is the mean of its per-item values, marked *.
    assert "| mmvu_val | 8 | 50.00* | 50.00 | 8 | 0 |" in result.output
    assert "no results.json beside the samples" in result.output


def test_the_report_has_table_3s_validation_average_beside_a_run(mmvu_dir, tmp_path, plain) -> None:
    out = tmp_path / "run"
    result = runner.invoke(
        app, ["eval", "--suite", "mmvu", "--data", str(mmvu_dir), "--model", "random", "--out", str(out),
              "--no-cache", "--quiet", "--frames", "all=2", "-S", "prompt=direct"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = runner.invoke(app, ["report", str(out), "--reference", "GPT-4o,o1"])
    assert report.exit_code == 0, report.output
    text = plain(report.output)
    assert "Avg. Validation" in text and "Humanities & Social Sci." in text
    assert "_GPT-4o (paper)_ | 67.4 |" in text and "o1 (100 validation examples) (paper)" in text
