"""Per-item metrics: accuracy, Jaccard over sets, blank weights, judge failures, boxes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from expvid.schema import AnswerType, Box, ExtractionStatus, Item, Judgment
from expvid.scoring.extraction import Extraction, extract_answer
from expvid.scoring.metrics import greedy_box_iou, jaccard, needs_judge, score_item


@pytest.mark.parametrize(
    ("predicted", "gold", "value"),
    [
        ([3, 4, 5], [3, 4, 5], 1.0),
        ([5, 4, 3], [3, 4, 5], 1.0),  # sets: order does not matter
        ([3, 4], [3, 4, 5], 2 / 3),
        ([3, 4, 5, 6], [3, 4, 5], 3 / 4),
        ([1, 2], [3, 4], 0.0),
        ([], [3, 4], 0.0),
        ([3, 3, 4], [3, 4], 1.0),
    ],
)
def test_jaccard(predicted: list[int], gold: list[int], value: float) -> None:
    assert jaccard(predicted, gold) == pytest.approx(value)


def test_choice_and_step_scores(choice_item: Item, step_item: Item) -> None:
    right = score_item(choice_item, extract_answer(r"\boxed{B}", choice_item))
    wrong = score_item(choice_item, extract_answer(r"\boxed{A}", choice_item))
    assert (right.earned, right.possible, wrong.earned) == (1.0, 1.0, 0.0)
    assert right.video_id == "v1" and right.discipline == "Chemistry" and right.extracted == "B"
    assert score_item(step_item, extract_answer("Step 4", step_item)).earned == 1.0
    assert score_item(step_item, extract_answer("Step 5", step_item)).earned == 0.0


def test_unparseable_and_failed_score_zero_with_status(choice_item: Item) -> None:
    unparseable = score_item(choice_item, extract_answer("I am not sure.", choice_item))
    failed = score_item(choice_item, extract_answer(None, choice_item))
    assert (unparseable.status, unparseable.earned) == (ExtractionStatus.UNPARSEABLE, 0.0)
    assert (failed.status, failed.earned) == (ExtractionStatus.FAILED, 0.0)


def test_sequence_score_is_jaccard(sequence_item: Item) -> None:
    score = score_item(sequence_item, extract_answer(r"\boxed{4, 5, 6}", sequence_item))
    assert score.earned == pytest.approx(2 / 4)


def _judgment(item: Item, verdicts: list[bool] | None, error: str | None = None) -> Judgment:
    return Judgment(item_id=item.id, task=item.task, judge="test", verdicts=verdicts, error=error)


def test_blank_item_weighs_its_blank_count(blank_item: Item) -> None:
    extraction = extract_answer(r"\boxed{a, b, c, d}", blank_item)
    assert needs_judge(blank_item, extraction)
    score = score_item(blank_item, extraction, _judgment(blank_item, [True, False, True, True]))
    assert (score.earned, score.possible, score.judge_error) == (3.0, 4.0, None)


def test_judge_failure_scores_zero_and_is_marked(blank_item: Item) -> None:
    extraction = extract_answer(r"\boxed{a, b, c, d}", blank_item)
    score = score_item(blank_item, extraction, _judgment(blank_item, None, error="judge timed out"))
    assert (score.earned, score.possible, score.judge_error) == (0.0, 4.0, "judge timed out")


def test_wrong_verdict_count_is_a_judge_failure(blank_item: Item) -> None:
    extraction = extract_answer(r"\boxed{a, b, c, d}", blank_item)
    score = score_item(blank_item, extraction, _judgment(blank_item, [True, True]))
    assert score.earned == 0.0
    assert "2 verdict(s) for 4 blank(s)" in (score.judge_error or "")


def test_missing_judgment_is_a_caller_bug(blank_item: Item) -> None:
    with pytest.raises(ValueError, match="needs a judgment"):
        score_item(blank_item, extract_answer(r"\boxed{a, b, c, d}", blank_item))
    other = Judgment(item_id="someone/else", task="x", judge="t", verdicts=[True] * 4)
    with pytest.raises(ValueError, match="given for item"):
        score_item(blank_item, extract_answer(r"\boxed{a, b, c, d}", blank_item), other)


def test_unparseable_blank_item_needs_no_judge(blank_item: Item) -> None:
    extraction = extract_answer("no idea", blank_item)
    assert not needs_judge(blank_item, extraction)
    score = score_item(blank_item, extraction)
    assert (score.earned, score.possible) == (0.0, 4.0)


def test_graded_free_text(make_item: Callable[..., Item]) -> None:
    item = make_item(
        id="promqa/7",
        suite="promqa",
        task="next",
        question="q",
        answer=["x"],
        answer_type=AnswerType.FREE_TEXT,
    )
    extraction = Extraction.found("x", "reply_without_reasoning")
    judged = Judgment(item_id=item.id, task=item.task, judge="gpt", score=1.0)
    assert score_item(item, extraction, judged, graded_max=2.0).earned == 0.5
    with pytest.raises(ValueError, match="graded_max"):
        score_item(item, extraction, judged)


def test_greedy_box_iou() -> None:
    a = Box(x1=0.0, y1=0.0, x2=0.5, y2=0.5)
    b = Box(x1=0.5, y1=0.5, x2=1.0, y2=1.0)
    half = Box(x1=0.0, y1=0.0, x2=0.5, y2=0.25)
    assert greedy_box_iou([a, b], [a, b]) == pytest.approx(1.0)
    assert greedy_box_iou([b, a], [a, b]) == pytest.approx(1.0)
    assert greedy_box_iou([half], [a, b]) == pytest.approx(0.5 / 2)
    assert greedy_box_iou([a, a], [a]) == pytest.approx(1.0)  # one gold box is matched once
    assert greedy_box_iou([], [a]) == 0.0
