"""`expvid report RUNS --analysis NAME`: tables a suite computes across runs, reached through the suite
(`run_analyses`), so the CLI names no suite; and human judgements graded on the suite's judge scale."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.run.rundir import RunDir
from expvid.schema import DataError, RunManifest
from expvid.scoring.agreement import read_human_judgments, scale_grades
from expvid.suites import registry
from expvid.suites.api import GenerationDefaults, RunAnalysis, Suite
from expvid.suites.registry import get_suite

runner = CliRunner()


def count_runs(runs: Sequence[Path]) -> str:
    models = [RunDir(path).read_manifest().model for path in runs]
    return f"| runs | models |\n| --- | --- |\n| {len(runs)} | {', '.join(models)} |"


class TablesSuite(Suite):
    """A suite from outside expvid whose paper has a table across runs."""

    name = "tables-demo"
    tasks = ()
    levels = ()
    generation = GenerationDefaults(temperature=0.0, max_tokens=16, source="none")

    def run_analyses(self) -> dict[str, RunAnalysis]:
        return {"model-count": RunAnalysis(help="how many runs, and of which models", run=count_runs)}


@pytest.fixture
def tables_suite(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(registry._REGISTERED, TablesSuite.name, TablesSuite)
    return TablesSuite.name


def make_run(root: Path, suite: str, model: str) -> Path:
    RunDir(root).write_manifest(RunManifest(suite=suite, model=model))
    return root


def test_an_outside_suites_analysis_runs_by_name(tables_suite: str, tmp_path: Path, plain) -> None:
    runs = [make_run(tmp_path / name, tables_suite, name) for name in ("model-a", "model-b")]
    result = runner.invoke(
        app, ["report", *map(str, runs), "--analysis", "model-count", "--markdown", str(tmp_path / "t.md")]
    )
    assert result.exit_code == 0, result.output
    assert "| 2 | model-a, model-b |" in result.output
    assert (tmp_path / "t.md").read_text(encoding="utf-8").strip() == result.output.strip()
    shown = runner.invoke(app, ["suites", "show", tables_suite])
    assert "analyses across runs" in plain(shown.output) and "model-count: how many runs" in plain(
        shown.output
    )


def test_an_analysis_the_suite_lacks_is_one_line_naming_what_it_has(
    tables_suite: str, tmp_path: Path, plain
) -> None:
    run = make_run(tmp_path / "run", tables_suite, "m")
    for flags in (["--analysis", "nosuch"], ["--self-preference"]):
        result = runner.invoke(app, ["report", str(run), *flags])
        assert result.exit_code == 2, result.output
        text = plain(result.output)
        assert "the tables-demo suite has no analysis" in text and "(its analyses: model-count)" in text
        assert len(text.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_runs_of_two_suites_are_refused_before_any_analysis(tables_suite: str, tmp_path: Path, plain) -> None:
    first = make_run(tmp_path / "a", tables_suite, "m")
    second = make_run(tmp_path / "b", "promqa", "m")
    result = runner.invoke(app, ["report", str(first), str(second), "--analysis", "model-count"])
    assert result.exit_code == 2 and "runs come from different suites: promqa, tables-demo" in plain(
        result.output
    )
    missing = runner.invoke(app, ["report", str(tmp_path / "nothing"), "--analysis", "model-count"])
    assert missing.exit_code == 2 and "not a run directory (no manifest.json)" in plain(missing.output)


def test_the_promqa_suite_offers_its_self_preference_tables() -> None:
    analyses = get_suite("promqa").run_analyses()
    assert set(analyses) == {"self-preference"} and "Table 12" in analyses["self-preference"].help
    assert get_suite("sfe").run_analyses() == {}


def test_human_judgements_are_grades_of_the_suites_judge_scale(tmp_path: Path) -> None:
    assert scale_grades(2.0) == (0, 1, 2) and scale_grades(10) == tuple(range(11))
    assert scale_grades(None) is None and scale_grades(0.5) is None
    path = tmp_path / "human.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ({"id": "a", "score": 7}, {"id": "b", "score": 10})))
    assert read_human_judgments(path, allowed=scale_grades(10)) == {"a": 7.0, "b": 10.0}
    with pytest.raises(DataError) as ternary:  # on a 0/1/2 scale, 7 is no grade
        read_human_judgments(path, allowed=scale_grades(2))
    assert "human.jsonl:1: score 7 is not one of [0, 1, 2]" in str(ternary.value)
    path.write_text(json.dumps({"id": "a", "score": 3}) + "\n" + json.dumps({"id": "b"}) + "\n")
    with pytest.raises(DataError) as shapeless:
        read_human_judgments(path, allowed=scale_grades(10))
    assert 'human.jsonl:2: expected {"id": ..., "score": 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 or 10}' in str(
        shapeless.value
    )
