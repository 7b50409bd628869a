"""SFE box grounding (tasks E011, E012) scored as the official SFE scorer does.

The official scorer (lmms-eval `sfe/utils.py`: `parse_float_sequence_within`, `compute_iou`,
`greedy_iou`) reads and scores boxes like this, and this module ports it:

- parsing: the text between the FIRST "[" and the LAST "]" on one line (regex `\\[(.*)\\]`, so
  a newline ends it), split at ";", each piece split at "," must give exactly four floats
  (pieces that do not are skipped); no box at all -> no answer ("execution failure"). A nested
  list "[[x1,y1,x2,y2],[...]]" therefore yields nothing, as in the official code.
- matching: predicted boxes are taken IN THE ORDER WRITTEN; each takes the gold box with the
  highest IoU among those not yet taken (the first one on ties, even at IoU 0); it stops when
  every gold box is taken. The summed IoU is divided by the number of gold boxes.

Differences kept small and explicit: a box pair whose union area is 0 (degenerate boxes) has IoU
0 here, where the official code divides by zero; a piece whose four values are not all finite
(`[NaN, NaN, NaN, NaN]`, `[inf, ...]`: Python's `float()` reads both) is skipped like any piece
that is not four numbers, where the official code computes an IoU of NaN that poisons its mean. The order-free alternative (best pair first,
`expvid.scoring.metrics.greedy_box_iou`) is reported beside it as a lenient metric.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_BRACKETS = re.compile(r"\[(.*)\]")

BoxList = list[list[float]]


def parse_official_boxes(text: str) -> BoxList | None:
    """Boxes as the official parser reads them, or None when it finds none."""
    match = _BRACKETS.search(text)
    if not match:
        return None
    boxes: BoxList = []
    for group in match.group(1).split(";"):
        values = group.split(",")
        if len(values) != 4:
            continue
        try:
            box = [float(value) for value in values]
        except ValueError:
            continue
        if all(math.isfinite(value) for value in box):
            boxes.append(box)
    return boxes or None


def official_iou(box1: Sequence[float], box2: Sequence[float]) -> float:
    """IoU of two [x_min, y_min, x_max, y_max] boxes as the official code computes it."""
    x_left, y_top = max(box1[0], box2[0]), max(box1[1], box2[1])
    x_right, y_bottom = min(box1[2], box2[2]), min(box1[3], box2[3])
    intersection = max(0.0, x_right - x_left) * max(0.0, y_bottom - y_top)
    area1 = (box1[2] - box1[0]) * (box1[3] - box1[1])
    area2 = (box2[2] - box2[0]) * (box2[3] - box2[1])
    union = area1 + area2 - intersection
    if union == 0 or not math.isfinite(union):
        return 0.0  # the official code raises ZeroDivisionError (or yields NaN) here
    iou = intersection / union
    return iou if math.isfinite(iou) else 0.0


def prediction_order_greedy_iou(
    gold: Sequence[Sequence[float]], predicted: Sequence[Sequence[float]]
) -> float:
    """The official `greedy_iou(answers, preds)`: predictions in order, each takes its best free gold box."""
    if not gold:
        raise ValueError("greedy IoU needs at least one gold box")
    total = 0.0
    taken: list[int] = []
    for box in predicted:
        if len(taken) == len(gold):
            break
        scores = [official_iou(answer, box) if i not in taken else -1.0 for i, answer in enumerate(gold)]
        best = max(scores)
        taken.append(scores.index(best))
        total += best
    return total / len(gold)
