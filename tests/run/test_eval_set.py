"""`expvid eval-set CONFIG.yaml`: cells, frames decoded once, retries as a unit, resume, report, leaderboard."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chromium import launched_chromium
from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply

runner = CliRunner()


class FlakyThenAnswering:
    """Fails every request until `recover()`; then answers like a model."""

    def __init__(self) -> None:
        self.broken = True

    def __call__(self, request: RecordedRequest) -> Reply:
        if self.broken:
            return Reply.error(400, "loopback: the endpoint is misconfigured")
        return Reply.ok("\\boxed{B}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with launched_chromium() as chromium:
        yield chromium


def _config(tmp_path: Path, sample_dir: Path, good: LoopbackServer, flaky: LoopbackServer) -> Path:
    text = f"""
out: {tmp_path / "campaign"}
cache_dir: {tmp_path / "cache"}
references: all
retries: 1
retry_wait_s: 0
parallel_cells: 2
n_bootstrap: 20
suites:
  - name: expvid
    data: {sample_dir}
    tasks: [tools, materials]
    limit: 2
    settings:
      default: {{}}
      asr: {{with_asr: true}}
models:
  - name: GPT-5
    model: openai:gpt-5@{good.openai_base_url}
    frame_preset: gpt-5
    concurrency: 4
    price: [1.25, 10]
  - name: Local VLM
    model: openai:local-vlm
    base_url: {flaky.openai_base_url}
    backend_options: {{max_retries: 0}}
"""
    path = tmp_path / "set.yaml"
    path.write_text(text)
    return path


def _state(out: Path) -> dict[str, Any]:
    return json.loads((out / "eval-set.json").read_text())["cells"]


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory, sample_dir: Path) -> dict[str, Any]:
    """Run a campaign three times: with a broken endpoint, after it recovers, after a kill mid-cell."""
    tmp_path = tmp_path_factory.mktemp("eval_set")
    flaky_model = FlakyThenAnswering()
    seen: dict[str, Any] = {}
    with LoopbackServer("\\boxed{A}") as good, LoopbackServer(flaky_model) as flaky:
        config = _config(tmp_path, sample_dir, good, flaky)
        out = tmp_path / "campaign"
        seen["first"] = runner.invoke(app, ["eval-set", str(config), "--quiet"])
        seen["first_state"] = _state(out)
        seen["frames"] = json.loads((out / "eval-set.json").read_text())["frames"]
        answers = [
            json.loads(line)
            for run in (out / "runs").glob("expvid/*/*")
            for line in (run / "predictions.jsonl").read_text().splitlines()
        ]
        seen["from_cache"] = [a["meta"]["frames_from_cache"] for a in answers if a["error"] is None]
        flaky_model.broken = False
        seen["good_requests"] = len(good.requests)
        seen["second"] = runner.invoke(app, ["eval-set", str(config), "--quiet"])
        seen["after_second"] = len(good.requests)
        seen["second_state"] = _state(out)
        # Killed in the middle of a cell: its run directory resumes, the others are not touched.
        victim = out / "runs" / "expvid" / "asr" / "GPT-5"
        lines = (victim / "predictions.jsonl").read_text().splitlines()
        (victim / "predictions.jsonl").write_text(lines[0] + "\n")
        raw = json.loads((out / "eval-set.json").read_text())
        raw["cells"]["expvid/asr/GPT-5"]["status"] = "running"
        (out / "eval-set.json").write_text(json.dumps(raw))
        seen["third"] = runner.invoke(app, ["eval-set", str(config), "--quiet"])
        seen["asked_again"] = len(good.requests) - seen["after_second"]
        seen["victim"] = [json.loads(x) for x in (victim / "predictions.jsonl").read_text().splitlines()]
    seen["out"] = out
    return seen


def test_cells_run_once_retry_as_a_unit_and_continue(campaign):
    first = campaign["first"]
    # The local model's cells fail: retried as a unit once, then left partial (exit 3).
    assert first.exit_code == 3, first.output
    state = campaign["first_state"]
    assert {cell: s["status"] for cell, s in state.items()} == {
        "expvid/default/GPT-5": "done",
        "expvid/asr/GPT-5": "done",
        "expvid/default/Local VLM": "partial",
        "expvid/asr/Local VLM": "partial",
    }
    assert state["expvid/default/Local VLM"]["attempts"] == 2
    frames = campaign["frames"]
    assert frames["decoded"] == frames["frame_sets"] > 0  # every distinct frame set decoded once
    assert len(campaign["from_cache"]) == 8 and all(campaign["from_cache"])  # no cell decoded a frame
    second = campaign["second"]
    assert second.exit_code == 0, second.output
    assert campaign["after_second"] == campaign["good_requests"]  # finished cells are not run again
    assert "2 cell(s) already finished" in second.output
    assert all(s["status"] == "done" for s in campaign["second_state"].values())
    assert campaign["third"].exit_code == 0, campaign["third"].output
    # The three answers the kill lost are back, from the shared response cache: nothing paid twice.
    victim = campaign["victim"]
    assert len(victim) == 4 and [p["cached"] for p in victim] == [False, True, True, True]
    assert campaign["asked_again"] == 0


def test_one_report_and_a_leaderboard(campaign):
    out = campaign["out"]
    report = (out / "report.md").read_text()
    assert "### expvid — default" in report and "### expvid — asr" in report
    assert "**GPT-5 (partial)**" in report and "**Local VLM (partial)**" in report
    assert "_GPT-5 (paper, think=True)_" in report  # the paper's reference rows
    assert "Campaign cost so far: $0.0" in report and "no price for expvid/default/Local VLM" in report
    page = (out / "leaderboard.html").read_text()
    assert page.count("<table class=board>") == 2 and "<span class=ci>[" in page
    view = out / "views" / "expvid__default__GPT-5.html"
    assert view.is_file() and "href='views/expvid__default__GPT-5.html'" in page


def test_leaderboard_sorts_in_a_browser(campaign, browser):
    tab = browser.new_page()
    tab.goto(f"file://{campaign['out'] / 'leaderboard.html'}")
    table = tab.locator("table.board").first
    header = table.locator("th", has_text="Avg. (Level-1)")
    column = int(header.get_attribute("data-col") or 0)

    def shown() -> list[float]:
        cells = table.locator(f"tbody tr td:nth-child({column + 1})")
        return [float(v) for v in cells.evaluate_all("cells => cells.map(c => c.dataset.v)") if v]

    header.click()
    scores = shown()
    assert len(scores) > 5 and scores == sorted(scores, reverse=True)  # paper rows and ours, best first
    header.click()
    assert shown() == sorted(scores)
    tab.close()


def test_eval_set_file_errors_name_the_file_and_the_setting(tmp_path, sample_dir):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        f"out: {tmp_path}/o\nsuites: [{{name: expvid, data: {sample_dir}}}]\nmodels: [{{name: x}}]\n"
    )
    result = runner.invoke(app, ["eval-set", str(bad)])
    assert result.exit_code == 2 and "bad.yaml: models.0.model: Field required" in result.output
    preset = tmp_path / "preset.yaml"
    preset.write_text(
        f"out: {tmp_path}/o\nsuites: [{{name: expvid, data: {sample_dir}}}]\n"
        "models: [{name: m, model: random, frame_preset: nope}]\n"
    )
    result = runner.invoke(app, ["eval-set", str(preset)])
    assert result.exit_code == 2 and "expvid/default/m: expvid setting frame_preset='nope'" in result.output
    setting = tmp_path / "setting.yaml"
    setting.write_text(
        f"out: {tmp_path}/o\nsuites: [{{name: expvid, data: {sample_dir}, settings: {{odd: {{with_asr: true, spelt_wrong: 1}}}}}}]\n"
        "models: [{name: m, model: random}]\n"
    )
    result = runner.invoke(app, ["eval-set", str(setting)])
    assert result.exit_code == 2 and "expvid/odd/m:" in result.output and "spelt_wrong" in result.output
    assert not (tmp_path / "o").exists()


def test_the_table3_example_names_nineteen_models_with_valid_presets(tmp_path, sample_dir):
    from expvid.run.eval_set_config import cell_config, cells_of, load_eval_set
    from expvid.run.evaluate import make_suite, resolve_frames

    example = Path(__file__).parents[2] / "docs" / "eval-sets" / "expvid-table3.yaml"
    config = load_eval_set(example)
    assert len(config.models) == 19
    level3 = {}
    for cell in cells_of(config):
        cell_cfg = cell_config(config, cell, sample_dir)
        level3[cell.model.name] = resolve_frames(make_suite(cell_cfg), cell_cfg.frames).counts["L3"]
    assert level3["Claude-Sonnet-4"] == 96 and level3["MiMo-VL-7B-RL"] == 512 and level3["GPT-5"] == 128
