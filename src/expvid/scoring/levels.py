"""How task scores combine into level averages, as the ExpVid paper's Table 2 computes them.

Checked against every row of Table 2 (tests/scoring/test_table2.py), with rounding in mind:
a printed average can differ from the average of printed task scores by up to 0.1.

- Level 1: weighted by item count, i.e. pooled accuracy over all L1 questions, as appendix F.1
  says. With the release's counts (tools 1130, materials 1266, quantity 701, operation 938) this
  reproduces 21 of the 23 printed L1 averages within 0.1 (Qwen2.5-VL-7B: 32.0/33.9/49.0/62.4 ->
  42.62, printed 42.6). The two exceptions: the Human row equals the unweighted mean (37.55 ->
  37.6; humans answered a subset, so the release counts do not apply) and Intern-S1 fits no
  weighting (49.33 weighted, 51.70 unweighted, printed 49.9).
- Levels 2 and 3: the unweighted mean of their task scores. Level 3 fits all 22 rows that have
  it within 0.1. Level 2 fits 19 of 23 rows within 0.25; the printed L2 averages run 0.05-0.23
  below the task mean in most rows, a bias no single set of task weights removes (the best
  weights found by search are almost uniform and still miss six rows by more than 0.1), and
  four rows fit no weighting at all: MiMo-VL-7B-RL without thinking (+1.8), InternVL3-8B
  (+1.9), Intern-S1 (-5.7) and Gemini-2.5-Pro without thinking (-1.6). Appendix F.1 describes
  L2 as "total score over total questions"; the per-task L2 counts are not published, so that
  reading cannot be checked, and the near-uniform best fit is why the task mean is the default.

A level whose tasks are not all present in a run is still averaged over the tasks that are, and
its `missing_tasks` says so; such a number is not comparable to the paper's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt


class LevelRule(StrEnum):
    ITEM_WEIGHTED = "item_weighted"  # sum_t n_t * score_t / sum_t n_t  (pooled over questions)
    TASK_MEAN = "task_mean"  # mean_t score_t


@dataclass(frozen=True)
class LevelSpec:
    """A level: its report key, its tasks (in table order) and how their scores combine."""

    name: str
    tasks: tuple[str, ...]
    rule: LevelRule


EXPVID_LEVELS: tuple[LevelSpec, ...] = (
    LevelSpec("L1", ("tools", "materials", "quantity", "operation"), LevelRule.ITEM_WEIGHTED),
    LevelSpec(
        "L2",
        ("sequence_ordering", "sequence_generation", "video_verification", "step_prediction"),
        LevelRule.TASK_MEAN,
    ),
    LevelSpec("L3", ("experimental_conclusion", "scientific_discovery"), LevelRule.TASK_MEAN),
)

#: Item counts per Level-1 task in the public release (formats.md); Table 2's L1 weights.
EXPVID_RELEASE_L1_COUNTS: dict[str, int] = {
    "tools": 1130,
    "materials": 1266,
    "quantity": 701,
    "operation": 938,
}


def combine(
    scores: npt.ArrayLike,
    counts: npt.ArrayLike,
    rule: LevelRule,
) -> npt.NDArray[np.float64]:
    """Level average over the last axis (tasks). NaN task scores (a task absent) are left out.

    Works on one row of task scores or on a (replicates x tasks) bootstrap matrix alike.
    """
    values = np.asarray(scores, dtype=np.float64)
    weights = np.broadcast_to(np.asarray(counts, dtype=np.float64), values.shape)
    present = ~np.isnan(values)
    # Task mean: every present task weighs 1. Item-weighted: its item count (absent tasks 0).
    weights = present.astype(np.float64) if rule is LevelRule.TASK_MEAN else np.where(present, weights, 0.0)
    total = weights.sum(axis=-1)
    summed = np.where(present, values, 0.0) * weights
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.where(total > 0, summed.sum(axis=-1) / total, np.nan), dtype=np.float64)
