"""SFE box grounding as the official scorer reads and matches boxes (prediction-order greedy IoU)."""

from __future__ import annotations

import pytest

from expvid.schema import Box, ExtractionStatus
from expvid.scoring.metrics import greedy_box_iou
from expvid.suites.sfe import SFESuite
from expvid.suites.sfe.official_boxes import official_iou, parse_official_boxes, prediction_order_greedy_iou


def test_parsing() -> None:
    assert parse_official_boxes("[0.1, 0.2, 0.3, 0.4; 0.5,0.6,0.7,0.8]") == [
        [0.1, 0.2, 0.3, 0.4],
        [0.5, 0.6, 0.7, 0.8],
    ]
    assert parse_official_boxes("Ships at [0.1,0.2,0.3,0.4;bad;0.5,0.6,0.7] done") == [[0.1, 0.2, 0.3, 0.4]]
    assert (
        parse_official_boxes("[[0.1,0.2,0.3,0.4],[0.5,0.6,0.7,0.8]]") is None
    )  # nested lists read as nothing
    assert parse_official_boxes("[0.1,0.2,\n0.3,0.4]") is None  # the regex stops at a newline
    assert parse_official_boxes("no boxes") is None


def test_prediction_order_greedy_matching() -> None:
    gold = [[0.0, 0.0, 0.4, 0.4], [0.4, 0.0, 0.8, 0.4]]
    first = [0.25, 0.0, 0.65, 0.4]  # overlaps both gold boxes, the second more
    second = [0.4, 0.0, 0.8, 0.4]  # exactly the second gold box, touching the first
    assert official_iou(first, gold[0]) == pytest.approx(3 / 13)
    assert official_iou(first, gold[1]) == pytest.approx(5 / 11)
    assert official_iou(second, gold[0]) == 0.0
    # official: the first prediction takes gold 2, the second is left with gold 1 (IoU 0)
    assert prediction_order_greedy_iou(gold, [first, second]) == pytest.approx((5 / 11) / 2)
    # written the other way round, the same boxes score (1 + 3/13) / 2
    assert prediction_order_greedy_iou(gold, [second, first]) == pytest.approx((1 + 3 / 13) / 2)
    # the order-free best-pair matching scores both orders like the second
    boxes = [Box(x1=b[0], y1=b[1], x2=b[2], y2=b[3]) for b in (*gold, first, second)]
    assert greedy_box_iou(boxes[2:], boxes[:2]) == pytest.approx((1 + 3 / 13) / 2)


def test_extra_predictions_stop_once_every_gold_box_is_taken_and_missing_ones_cost() -> None:
    gold = [[0.0, 0.0, 0.5, 0.5]]
    assert prediction_order_greedy_iou(gold, [[0.0, 0.0, 0.5, 0.5], [0.6, 0.6, 0.9, 0.9]]) == 1.0
    assert prediction_order_greedy_iou([*gold, [0.5, 0.5, 1.0, 1.0]], [[0.0, 0.0, 0.5, 0.5]]) == 0.5
    assert official_iou([0.2, 0.2, 0.2, 0.2], [0.2, 0.2, 0.2, 0.2]) == 0.0  # official: ZeroDivisionError


def test_suite_extraction_and_score(sfe_dataset) -> None:
    suite = SFESuite({"judge_input": "stripped"})
    item = next(i for i in sfe_dataset.items if i.id == "en/E011/0005")
    reply = "<think>maybe [0,0,1,1]</think>[0.10,0.20,0.30,0.40; 0.55,0.60,0.80,0.90]"
    found = suite.extract(reply, item)
    assert found.ok and found.value == [[0.1, 0.2, 0.3, 0.4], [0.55, 0.6, 0.8, 0.9]]
    # raw (the default, as the official code): the brackets are read over the whole reply, think block
    # included, so "[0,0,1,1]</think>[0.10,..." spans both and only the last box has four numbers
    official = SFESuite().extract(reply, item)
    assert official.ok and official.value == [[0.55, 0.6, 0.8, 0.9]]
    assert suite.score(item, found, None).earned == pytest.approx(1.0)
    nested = suite.extract("[[0.10,0.20,0.30,0.40],[0.55,0.60,0.80,0.90]]", item)
    assert nested.status is ExtractionStatus.UNPARSEABLE
    assert suite.score(item, nested, None).earned == 0.0
    assert suite.extract(None, item).status is ExtractionStatus.FAILED
