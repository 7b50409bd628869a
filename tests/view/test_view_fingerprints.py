"""The viewer's "dataset changed since the run" compares like with like.

`expvid eval` fingerprints annotations and media; `expvid score --predictions` (and `--from
lmms-eval`, which goes through it) fingerprints annotations only: comparing the latter with a
fingerprint that includes media said "changed" for every such run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.view import ViewSession

runner = CliRunner()


def test_runs_scored_from_predictions_match_their_data_and_an_edit_is_still_seen(
    sample_dir: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_dir / "annotations", data / "annotations")
    shutil.copytree(sample_dir / "videos", data / "videos")
    records = [
        json.loads(line) for line in (data / "annotations/level1/tools.jsonl").read_text().splitlines()
    ]
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": r["id"], "task": "tools", "response": "\\boxed{A}"}) + "\n" for r in records
        )
    )
    external = tmp_path / "external"
    scored = runner.invoke(
        app,
        ["score", "--data", str(data), "--predictions", str(predictions), "--out", str(external), "--quiet"],
    )
    assert scored.exit_code == 0, scored.output
    evaluated = tmp_path / "evaluated"
    args = ["eval", "--data", str(data), "--model", "first-option", "--tasks", "tools", "--limit", "2",
            "--frames", "L1=2", "--size", "32", "--no-cache", "--quiet", "--out", str(evaluated)]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0

    for run in (external, evaluated):
        dataset = ViewSession([run]).runs[0].dataset
        assert (dataset.fingerprint_status, dataset.note) == ("match", None), run.name

    path = data / "annotations/level1/tools.jsonl"
    path.write_text(path.read_text().replace(records[0]["question"], "EDITED " + records[0]["question"], 1))
    for run in (external, evaluated):
        dataset = ViewSession([run]).runs[0].dataset
        assert dataset.fingerprint_status == "differs" and "changed since the run" in (dataset.note or "")
