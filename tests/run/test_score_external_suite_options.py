"""`expvid score --predictions` with suite options: the Chinese SFE set scored from an external file."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.registry import get_suite
from expvid.suites.sfe import make_sfe_sample

runner = CliRunner()


def test_sfe_chinese_predictions_score_with_language_option(tmp_path: Path) -> None:
    data = tmp_path / "sfe"
    make_sfe_sample(data)
    items = get_suite("sfe", {"languages": ["zh"]}).load(data).items
    assert items and all(item.id.startswith("zh/") for item in items)
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": item.id, "response": "\\boxed{A}"}, ensure_ascii=False) + "\n" for item in items
        )
    )
    out = tmp_path / "run"
    args = [
        "score",
        "--suite",
        "sfe",
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
    ]
    without = runner.invoke(app, [*args, "--quiet"])
    assert without.exit_code == 2 and "no item with id 'zh/" in without.output
    scored = runner.invoke(app, [*args, "-S", "language=zh", "--quiet"])
    assert scored.exit_code == 0, scored.output
    summary = json.loads((out / "scores.json").read_text())["run"]
    assert summary["n_predictions"] == len(items)
    assert "Avg. zh" in scored.output
