"""Controls and item analysis from real runs: `expvid eval` against a loopback server whose scripted
models answer by design, then `expvid audit --runs` over the run directories."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.audit import audit_release, read_audit
from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.schema import DataError
from expvid.suites.registry import get_suite

TASKS = ["tools", "materials"]
LIMIT = 4
MODELS = ("m1", "m2", "m3")
NAMES = tuple(f"openai:{m}" for m in MODELS)


@pytest.fixture(scope="module")
def runs(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Runs of three models with and without frames (and m1 with one frame and shuffled frames).

    Seeing the video every model answers correctly, except on one item where all three pick the same
    wrong option (a candidate wrong key). Without frames they answer two items correctly (leaky) and
    the rest with a wrong option."""
    suite = get_suite("expvid")
    items = [i for i in suite.load(sample_dir) if i.task in TASKS]
    chosen = [i for task in TASKS for i in [x for x in items if x.task == task][:LIMIT]]
    by_prompt = {suite.prompt_text(item): item for item in chosen}
    wrong_key, leaky = chosen[1], {chosen[0].id, chosen[5].id}

    def other(item_answer: str) -> str:
        return "B" if item_answer != "B" else "C"

    def respond(request: RecordedRequest) -> Reply:
        item = by_prompt[request.texts[-1]]
        sees = request.n_images > 0
        if sees:
            letter = other(str(item.answer)) if item.id == wrong_key.id else str(item.answer)
        else:
            letter = str(item.answer) if item.id in leaky else other(str(item.answer))
        return Reply.ok(f"The answer is \\boxed{{{letter}}}")

    root = tmp_path_factory.mktemp("runs")
    with LoopbackServer(respond) as server:
        for model in MODELS:
            controls = ["full", "none"] + (["single", "shuffled"] if model == "m1" else [])
            for control in controls:
                config = EvalConfig(
                    data=sample_dir, model=f"openai:{model}@{server.openai_base_url}", out=root / f"{model}-{control}",
                    tasks=TASKS, limit=LIMIT, cache_dir=None, n_bootstrap=10, frames_control=control,  # type: ignore[arg-type]
                )  # fmt: skip
                asyncio.run(evaluate(config, command=["test"], show_progress=False))
    return root, {
        "wrong_key": wrong_key.id,
        "leaky": ",".join(sorted(leaky)),
        "wrong_key_task": wrong_key.task,
    }


def test_controls_and_item_analysis_from_runs(
    sample_dir: Path, runs: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, planted = runs
    result = CliRunner().invoke(
        app, ["audit", "--data", str(sample_dir), "--tasks", ",".join(TASKS), "--runs", str(root), "--out", str(tmp_path / "a"), "--no-embeddings", "--quiet"]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = read_audit(tmp_path / "a")
    controls = report.controls
    assert controls is not None
    assert sorted((r["model"], r["control"]) for r in controls["runs"]) == sorted(
        [(m, c) for m in NAMES for c in ("full", "none")]
        + [("openai:m1", "single"), ("openai:m1", "shuffled")]
    )
    tools = {e["model"].removeprefix("openai:"): e for e in controls["tasks"] if e["task"] == "tools"}
    m1 = tools["m1"]
    assert m1["full"]["accuracy"] == pytest.approx(3 / 4)  # the wrong-key item is missed
    assert m1["none"]["accuracy"] == pytest.approx(1 / 4)  # one leaky item
    assert m1["multimodal_gain"]["value"] == pytest.approx(0.5)
    assert m1["single"]["accuracy"] == pytest.approx(3 / 4) and m1["single_frame"][
        "share_of_gain"
    ] == pytest.approx(1.0)
    assert m1["order_sensitivity"]["value"] == pytest.approx(0.0)
    assert (
        m1["leakage"]["chance"] == pytest.approx(0.25) and m1["leakage"]["leaks"] is False
    )  # 1 of 4 is chance
    assert "single" not in tools["m2"]

    leaky = set(planted["leaky"].split(","))
    without_video = {i.id for i in report.items if "answerable without the video" in i.flags}
    assert without_video == leaky
    assert (
        "3 of 3 model(s) answer it correctly without any frame"
        in report.item(next(iter(leaky))).reasons["answerable without the video"]
    )
    keys = {i.id for i in report.items if "candidate wrong key" in i.flags}
    assert keys == {planted["wrong_key"]}
    analysis = report.item_analysis
    assert analysis is not None and sorted(analysis["models"]) == list(NAMES)
    assert analysis["items"][planted["wrong_key"]]["difficulty"] == 0.0
    assert analysis["items"][planted["wrong_key"]]["candidate_key"] in "BC"
    # every model picks the key or the same wrong letter: the two other options are never picked
    assert len(analysis["items"][planted["wrong_key"]]["unpicked_distractors"]) == 2
    markdown = (tmp_path / "a" / "audit.md").read_text()
    assert "## Controls from runs" in markdown and "## Item analysis across models" in markdown


def test_runs_of_another_release_are_refused(
    sample_dir: Path, runs: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    root, _ = runs
    other = tmp_path / "other"
    (other / "annotations" / "level1").mkdir(parents=True)
    source = sample_dir / "annotations" / "level1" / "tools.jsonl"
    lines = source.read_text().splitlines()
    (other / "annotations" / "level1" / "tools.jsonl").write_text("\n".join(lines[:3]) + "\n")
    with pytest.raises(DataError, match=r"--runs .*m1-full: made on other annotation files"):
        audit_release(other, runs=[root / "m1-full"])
