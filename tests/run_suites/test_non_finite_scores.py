"""Scores are always numbers: SFE box replies such as `[NaN, NaN, NaN, NaN]` never cost a run its report.

Python's `float()` (the official parser's) reads "NaN", "nan" and "inf"; an IoU over such a box is
NaN, which scores.json wrote as null and then refused to read back. Here the real SFE grounding
items are answered that way by a loopback model, the run is reported and re-scored, and the schema
itself is shown to refuse a non-finite item score.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.run.config import EvalConfig
from expvid.run.evaluate import evaluate
from expvid.schema import ExtractionStatus, ItemScore, Judgment
from expvid.suites.sfe.official_boxes import official_iou, parse_official_boxes

runner = CliRunner()
REPLIES = ["[NaN, NaN, NaN, NaN]", "[nan,0.1,0.3,0.3]", "[inf, inf, inf, inf]", "[0.1,0.1,0.5,0.5;nan,0,1,1]"]


@pytest.mark.parametrize("reply", REPLIES)
def test_the_official_parser_keeps_only_finite_boxes(reply: str) -> None:
    boxes = parse_official_boxes(reply)
    assert boxes is None or all(math.isfinite(v) for box in boxes for v in box)
    assert official_iou([0.1, 0.1, 0.5, 0.5], [math.nan, 0, 1, 1]) == 0.0


def test_the_schema_refuses_non_finite_scores() -> None:
    for value in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValidationError):
            ItemScore(item_id="x", task="t", status=ExtractionStatus.OK, earned=value)
        with pytest.raises(ValidationError):
            Judgment(item_id="x", task="t", judge="j", score=value)


def test_a_run_answered_with_nan_boxes_is_scored_reported_and_rescored(
    sfe_sample: Path, tmp_path: Path
) -> None:
    seen: dict[str, int] = {}

    def reply(request: RecordedRequest) -> Reply:
        n = seen.setdefault("n", 0)
        seen["n"] = n + 1
        return Reply.ok(REPLIES[n % len(REPLIES)])

    out = tmp_path / "run"
    with LoopbackServer(reply) as server:
        config = EvalConfig(
            suite="sfe", data=sfe_sample, model=f"openai:nan@{server.openai_base_url}", out=out, cache_dir=None,
            n_bootstrap=20, tasks=["grounding"], suite_settings={"language": "both"},
        )  # fmt: skip
        asyncio.run(evaluate(config, command=["test"], show_progress=False))
    scores = json.loads((out / "scores.json").read_text())
    grounding = scores["tasks"]["grounding"]
    assert grounding["n"] == 4 and math.isfinite(grounding["score"])
    assert grounding["n_unparseable"] == 3  # every box non-finite: no box at all
    items = [json.loads(line) for line in (out / "item_scores.jsonl").read_text().splitlines()]
    assert all(isinstance(item["earned"], float) and math.isfinite(item["earned"]) for item in items)
    assert all(value is None or math.isfinite(value) for item in items for value in item["metrics"].values())
    mixed = next(item for item in items if item["status"] == "ok")  # the one finite box was read
    assert mixed["extracted"] == [[0.1, 0.1, 0.5, 0.5]]

    report = runner.invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    rescored = runner.invoke(app, ["score", str(out), "--quiet"])
    assert rescored.exit_code == 0, rescored.output
    assert json.loads((out / "scores.json").read_text())["tasks"]["grounding"] == grounding
