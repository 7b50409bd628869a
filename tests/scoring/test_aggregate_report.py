"""From item scores to the scores.json report: numbers, counts, levels, disciplines, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from expvid.schema import ExtractionStatus, ItemScore
from expvid.scoring.aggregate import build_report
from expvid.scoring.levels import LevelRule
from expvid.scoring.report import JUDGE_FAILURE_POLICY, ScoreReport

OK, UNP, FAIL = ExtractionStatus.OK, ExtractionStatus.UNPARSEABLE, ExtractionStatus.FAILED


def s(
    item: str,
    task: str,
    earned: float,
    possible: float = 1.0,
    *,
    status: ExtractionStatus = OK,
    video: str | None = "v1",
    discipline: str | None = "Biology",
    judge_error: str | None = None,
) -> ItemScore:
    return ItemScore(
        item_id=item,
        task=task,
        status=status,
        earned=earned,
        possible=possible,
        video_id=video,
        discipline=discipline,
        judge_error=judge_error,
    )


@pytest.fixture
def scores() -> list[ItemScore]:
    return [
        # L1: tools 3 items (2 right), materials 1 item (right) -> item-weighted L1 = 3/4
        s("tools/1", "tools", 1),
        s("tools/2", "tools", 1, video="v2"),
        s("tools/3", "tools", 0, status=UNP, video="v3", discipline="Chemistry"),
        s("materials/1", "materials", 1, video="v2", discipline="Chemistry"),
        # L2: ordering 1/2 (one failed request), generation mean Jaccard 0.5
        s("sequence_ordering/1", "sequence_ordering", 1),
        s("sequence_ordering/2", "sequence_ordering", 0, status=FAIL, video="v2"),
        s("sequence_generation/1", "sequence_generation", 0.75),
        s("sequence_generation/2", "sequence_generation", 0.25, video="v3"),
        # L3: blank-level: (3 + 0 + 1) / (4 + 2 + 1); the 2-blank item's judge failed
        s("experimental_conclusion/1", "experimental_conclusion", 3, 4),
        s("experimental_conclusion/2", "experimental_conclusion", 0, 2, judge_error="timeout", video="v2"),
        s("experimental_conclusion/3", "experimental_conclusion", 1, 1, video="v3"),
    ]


def test_task_scores_and_counts(scores: list[ItemScore]) -> None:
    report = build_report(scores, n_boot=0)
    tools = report.tasks["tools"]
    assert (tools.score, tools.n, tools.n_unparseable, tools.n_failed) == (pytest.approx(200 / 3), 3, 1, 0)
    ordering = report.tasks["sequence_ordering"]
    assert (ordering.score, ordering.n_failed) == (50.0, 1)
    assert report.tasks["sequence_generation"].score == pytest.approx(50.0)
    analysis = report.tasks["experimental_conclusion"]
    assert analysis.score == pytest.approx(100 * 4 / 7)
    assert (analysis.n, analysis.n_judge_failed, analysis.possible) == (3, 1, 7.0)
    assert analysis.score_judged_only == pytest.approx(100 * 4 / 5)
    assert tools.score_judged_only is None
    assert list(report.tasks) == [
        "tools",
        "materials",
        "sequence_ordering",
        "sequence_generation",
        "experimental_conclusion",
    ]


def test_level_averages_follow_the_rules(scores: list[ItemScore]) -> None:
    report = build_report(scores, n_boot=0)
    l1, l2, l3 = report.levels["L1"], report.levels["L2"], report.levels["L3"]
    assert l1.score == pytest.approx(75.0)  # item-weighted: (3 * 66.7 + 1 * 100) / 4
    assert (l1.rule, l1.n, l1.n_unparseable) == (LevelRule.ITEM_WEIGHTED, 4, 1)
    assert l1.missing_tasks == ["quantity", "operation"]
    assert l2.score == pytest.approx((50.0 + 50.0) / 2)
    assert (l2.rule, l2.n_failed) == (LevelRule.TASK_MEAN, 1)
    assert l3.score == pytest.approx(100 * 4 / 7)
    assert (l3.n_judge_failed, l3.tasks, l3.missing_tasks) == (
        1,
        ["experimental_conclusion"],
        ["scientific_discovery"],
    )


def test_disciplines_use_the_same_rules(scores: list[ItemScore]) -> None:
    report = build_report(scores, n_boot=0)
    assert set(report.disciplines) == {"Biology", "Chemistry"}
    chemistry = report.disciplines["Chemistry"]
    assert chemistry.tasks["tools"].score == 0.0 and chemistry.tasks["materials"].score == 100.0
    assert chemistry.levels["L1"].score == pytest.approx(50.0)
    assert "L2" not in chemistry.levels
    assert report.disciplines["Biology"].tasks["tools"].n == 2


def test_json_shape_round_trip_and_atomic_write(scores: list[ItemScore], tmp_path: Path) -> None:
    report = build_report(scores, n_boot=200, seed=3)
    data = json.loads(report.to_json())
    assert set(data) == {"tasks", "levels", "disciplines", "settings"}
    assert set(data["tasks"]["tools"]) >= {
        "score",
        "n",
        "n_unparseable",
        "n_failed",
        "n_judge_failed",
        "ci95",
    }
    assert set(data["disciplines"]["Biology"]) == {"tasks", "levels"}
    assert data["settings"]["judge_failure_policy"] == JUDGE_FAILURE_POLICY
    assert data["settings"]["level_rules"] == {"L1": "item_weighted", "L2": "task_mean", "L3": "task_mean"}
    path = tmp_path / "scores.json"
    report.write(path)
    assert ScoreReport.from_json(path.read_text()) == report
    assert not list(tmp_path.glob("*.tmp"))


def test_duplicate_items_are_refused(scores: list[ItemScore]) -> None:
    with pytest.raises(ValueError, match="scored more than once"):
        build_report([*scores, scores[0]], n_boot=0)


def test_unknown_task_is_reported_after_known_ones() -> None:
    report = build_report([s("x/1", "custom_task", 1), s("tools/1", "tools", 0)], n_boot=0)
    assert list(report.tasks) == ["tools", "custom_task"]
    assert set(report.levels) == {"L1"}
