"""From item scores to `scores.json`: task scores, level averages, disciplines, intervals.

Task score = 100 x total earned / total possible. For MCQs and step prediction that is top-1
accuracy, for sequence generation the mean Jaccard, for level 3 blank-level accuracy (possible =
blanks). Level averages follow `levels.py`.

Failures stay visible. Unparseable answers and failed requests score 0 and are counted
(`n_unparseable`, `n_failed`). Items whose judge failed also score 0 in the headline - leaving
them out would let a flaky judge raise a model's score - and are counted in `n_judge_failed`,
with `score_judged_only` giving the score over the items the judge did decide, so a reader can
see how much the failures could matter. (`JUDGE_FAILURE_POLICY` is written into every report.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from expvid.schema import ExtractionStatus, ItemScore
from expvid.scoring.bootstrap import bootstrap_intervals, cluster_table, statistics
from expvid.scoring.levels import EXPVID_LEVELS, LevelSpec
from expvid.scoring.report import LevelSummary, ReportSettings, ScoreGroup, ScoreReport, TaskSummary


def _check_unique(scores: Sequence[ItemScore]) -> None:
    repeated = [item for item, n in Counter(s.item_id for s in scores).items() if n > 1]
    if repeated:
        raise ValueError(f"{len(repeated)} item(s) scored more than once, e.g. {repeated[:3]}")


def ordered_tasks(scores: Sequence[ItemScore], levels: Sequence[LevelSpec]) -> list[str]:
    """Tasks in the levels' table order, then any others in order of first appearance."""
    present = dict.fromkeys(s.task for s in scores)
    known = [t for spec in levels for t in spec.tasks if t in present]
    return known + [t for t in present if t not in known]


def _task_summary(items: list[ItemScore], ci: tuple[float, float] | None) -> TaskSummary:
    earned = sum(s.earned for s in items)
    possible = sum(s.possible for s in items)
    judged = [s for s in items if s.judge_error is None]
    n_judge_failed = len(items) - len(judged)
    judged_possible = sum(s.possible for s in judged)
    return TaskSummary(
        score=100.0 * earned / possible if possible else 0.0,
        n=len(items),
        n_unparseable=sum(s.status is ExtractionStatus.UNPARSEABLE for s in items),
        n_failed=sum(s.status is ExtractionStatus.FAILED for s in items),
        n_judge_failed=n_judge_failed,
        ci95=ci,
        earned=earned,
        possible=possible,
        score_judged_only=(
            100.0 * sum(s.earned for s in judged) / judged_possible
            if n_judge_failed and judged_possible
            else None
        ),
    )


def score_group(
    scores: Sequence[ItemScore],
    levels: Sequence[LevelSpec] = EXPVID_LEVELS,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ScoreGroup:
    """Task and level summaries of one set of item scores (a whole run, or one discipline)."""
    _check_unique(scores)
    tasks = ordered_tasks(scores, levels)
    table = cluster_table(scores, tasks)
    point = statistics(table.earned.sum(0), table.possible.sum(0), table.count.sum(0), tasks, levels)
    intervals = bootstrap_intervals(table, levels, n_boot=n_boot, seed=seed, confidence=confidence)
    by_task: dict[str, list[ItemScore]] = {t: [] for t in tasks}
    for score in scores:
        by_task[score.task].append(score)

    group = ScoreGroup(tasks={t: _task_summary(by_task[t], intervals[t]) for t in tasks})
    for k, spec in enumerate(levels):
        present = [t for t in spec.tasks if t in group.tasks]
        if not present:
            continue
        value = point[len(tasks) + k]
        summaries = [group.tasks[t] for t in present]
        group.levels[spec.name] = LevelSummary(
            score=float(value) if not np.isnan(value) else 0.0,
            n=sum(s.n for s in summaries),
            n_unparseable=sum(s.n_unparseable for s in summaries),
            n_failed=sum(s.n_failed for s in summaries),
            n_judge_failed=sum(s.n_judge_failed for s in summaries),
            ci95=intervals[spec.name],
            rule=spec.rule,
            tasks=present,
            missing_tasks=[t for t in spec.tasks if t not in group.tasks],
        )
    return group


def build_report(
    scores: Sequence[ItemScore],
    levels: Sequence[LevelSpec] = EXPVID_LEVELS,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    by_discipline: bool = True,
) -> ScoreReport:
    """The whole `scores.json`: overall tasks and levels, then the same per discipline.

    Items without a discipline are left out of the breakdown (they still count overall).
    `n_boot=0` skips the intervals.
    """
    overall = score_group(scores, levels, n_boot=n_boot, seed=seed, confidence=confidence)
    disciplines: dict[str, ScoreGroup] = {}
    if by_discipline:
        names = sorted({s.discipline for s in scores if s.discipline is not None})
        for name in names:
            subset = [s for s in scores if s.discipline == name]
            disciplines[name] = score_group(subset, levels, n_boot=n_boot, seed=seed, confidence=confidence)
    return ScoreReport(
        tasks=overall.tasks,
        levels=overall.levels,
        disciplines=disciplines,
        settings=ReportSettings(
            n_bootstrap=n_boot,
            seed=seed,
            confidence=confidence,
            level_rules={spec.name: spec.rule for spec in levels},
        ),
    )
