"""Reports in the paper's Table 2 layout (Markdown, CSV, HTML) and the paired comparison of two runs."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate

runner = CliRunner()
HEADER = "| Model | Tool | Mat. | Quan. | Oper. | Avg. (Level-1) | Ord. | Gen. | Veri. | Pred. | Avg. (Level-2) | Anal. | Disc. | Avg. (Level-3) |"


@pytest.fixture(scope="module")
def two_runs(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("runs")
    runs = []
    for model in ("random:1", "first-option"):
        out = root / model.replace(":", "_")
        config = EvalConfig(data=sample_dir, model=model, out=out, cache_dir=root / "cache", n_bootstrap=100)
        asyncio.run(evaluate(config, command=["t"], show_progress=False))
        runs.append(out)
    return runs[0], runs[1]


def test_markdown_has_table2_columns_and_reference_rows(two_runs):
    result = runner.invoke(app, ["report", str(two_runs[0]), str(two_runs[1]), "--reference", "GPT-5,Human"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert HEADER in lines
    rows = [line for line in lines if line.startswith("| **") or line.startswith("| _")]
    assert [r.split("|")[1].strip() for r in rows][:2] == ["**random:1**", "**first-option**"]
    gpt5 = next(r for r in rows if "GPT-5" in r)
    assert (
        "| 51.6 | 37.8 | 59.5 | 71.9 | 53.3 | 85.1 | 66.9 | 26.8 | 51.8 | 57.5 | 55.4 | 57.4 | 56.4 |" in gpt5
    )
    assert "OFFLINE" in result.output  # the offline Level-3 judge is labelled


def test_csv_and_html_outputs(two_runs, tmp_path):
    html_path, csv_path = tmp_path / "r.html", tmp_path / "r.csv"
    result = runner.invoke(
        app, ["report", str(two_runs[0]), str(two_runs[1]), "--html", str(html_path), "--csv", str(csv_path)]
    )
    assert result.exit_code == 0, result.output
    table = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert [row["model"] for row in table] == ["random:1", "first-option"]
    assert "Level-1/Tool" in table[0] and "Level-1/Avg. ci_low" in table[0]
    page = html_path.read_text()
    assert page.count("<svg") >= 2  # per-task and per-discipline plots, inline
    assert not re.search(r"""(src|href)=["']https?://""", page), "the page must be self-contained"
    assert "Level-1" in page and "Tool" in page and "random:1" in page


def test_compare_runs_paired(two_runs):
    result = runner.invoke(app, ["compare", str(two_runs[0]), str(two_runs[1]), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    assert "| L1 |" in result.output and "| tools |" in result.output
    row = next(line for line in result.output.splitlines() if line.startswith("| tools |"))
    a, b, diff = (float(x) for x in row.split("|")[2:5])
    assert diff == pytest.approx(a - b, abs=0.11)
