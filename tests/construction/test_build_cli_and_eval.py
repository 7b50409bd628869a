"""`expvid build` on the command line, and `expvid eval` run on what it wrote."""

from __future__ import annotations

import json
import re

from build_helpers import subset
from typer.testing import CliRunner

from expvid.cli.main import app

runner = CliRunner()


def flat(text: str) -> str:
    """The output without rich's box drawing and line wrapping."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def test_eval_runs_on_the_built_candidates(sample_build, tmp_path):
    run = tmp_path / "run"
    result = runner.invoke(
        app,
        ["eval", "--data", str(sample_build.out), "--model", "random:0", "--out", str(run), "--limit", "2",
         "--frames", "L1=2,L2=2,L3=4", "--size", "64", "--no-cache", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    scores = json.loads((run / "scores.json").read_text())
    assert set(scores["tasks"]) == {
        "tools", "materials", "quantity", "operation", "sequence_ordering", "sequence_generation",
        "video_verification", "step_prediction", "experimental_conclusion", "scientific_discovery",
    }  # fmt: skip
    predictions = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 20 and all(p["error"] is None for p in predictions)


def test_cli_builds_and_summarises(sample_sources, tmp_path, lab_server):
    sources = subset(sample_sources, tmp_path / "sources", ["64455"])
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["build", str(sources), "--out", str(out), "--llm", f"openai:r1@{lab_server.openai_base_url}",
         "--levels", "3", "--min-duration", "60", "--max-duration", "900", "--blind-samples", "0",
         "--no-asr-audit", "--price", "llm=1,2", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "2 candidate item(s)" in result.output and "est. cost $0.0" in result.output
    report = json.loads((out / "build_report.json").read_text())
    # The blind audit asks the drafting model, so it is priced like it.
    assert report["cost"]["prices_per_1m_tokens"] == {"llm": [1.0, 2.0], "blind": [1.0, 2.0]}
    assert report["items"]["experimental_conclusion"]["kept"] == 1
    assert (out / "videos/level_3/64455.mp4").is_file()  # untrimmed without Level 2: a copy of the source


def test_cli_rejects_bad_arguments_clearly(sample_sources, tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    cases = [
        (
            ["--out", str(tmp_path / "o1"), "--llm", "random", "--price", "llm=cheap"],
            "expected [ROLE=]IN,OUT",
        ),
        (["--out", str(tmp_path / "o2"), "--llm", "random", "--price", "gpu=1,2"], "unknown role"),
        (["--out", str(foreign), "--llm", "openai:m@http://127.0.0.1:9/v1"], "refusing to write into"),
        (["--out", str(tmp_path / "o3"), "--llm", "nonsense:spec"], "unknown model spec"),
        (["--out", str(tmp_path / "o4"), "--llm", "random", "--levels", "1,4"], "levels must be"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["build", str(sample_sources), *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in flat(result.output), (message, result.output)
    assert (foreign / "notes.txt").read_text() == "mine" and len(list(foreign.iterdir())) == 1
    missing = runner.invoke(
        app, ["build", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o5"), "--llm", "random"]
    )
    assert missing.exit_code == 2 and "sources folder not found" in flat(missing.output)
