"""What a suite's paper reports beyond task and level scores, computed from the same item scores.

- breakdowns: the suite's `groups(item)` keys (e.g. clean / noisy recordings, answer source,
  language, discipline x language) -> task and level scores per group, with intervals;
- metrics: per-item values from the suite's `extra_metrics` (e.g. BERTScore, IoU variants,
  execution success), averaged overall and per breakdown group, with how many items had no value;
- extraction modes: the suite's other readings of the same replies (`extraction_modes`, e.g. an
  official scorer's reader), scored like the headline, with the items whose answer differs listed;
- pass@k from n samples per item (unbiased; expected best-of-k for graded scores);
- judge agreement with human judgements (the suite's `human_judgments` file, graded on its
  `judge_scale`).

A suite opts in by defining the hook; suites without it (ExpVid) get none of these fields.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from expvid.schema import DataError, Item, ItemScore, Judgment
from expvid.scoring import Extraction, ScoreGroup, ScoreReport, build_report, score_group
from expvid.scoring.agreement import AgreementResult, judge_agreement, read_human_judgments, scale_grades
from expvid.scoring.levels import LevelSpec
from expvid.scoring.pass_at_k import pass_at_k_curve
from expvid.suites.protocol import EvalSuite

MetricValues = dict[str, dict[str, float | None]]


class MetricSummary(BaseModel):
    """Mean of a per-item metric over the items that have a value (`n`); `n_missing` had none."""

    score: float | None
    n: int
    n_missing: int = 0
    unit: str = ""


class BreakdownGroup(ScoreGroup):
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)


class ModeDifference(BaseModel):
    item_id: str
    headline: Any = None
    mode: Any = None
    headline_correct: bool
    mode_correct: bool


class ModeReport(ScoreReport):
    """The run scored with another extraction mode of the same replies."""

    description: str = ""
    n_fallback: int = 0  # answers the mode made up (the official random guess)
    differs: list[ModeDifference] = Field(default_factory=list)


class PassAtK(BaseModel):
    n_samples: int
    n_items: int
    n_incomplete: int = 0  # items without all samples, left out
    estimator: str = "unbiased expected best-of-k over the n samples (= pass@k for 0/1 scores)"
    overall: dict[int, float] = Field(default_factory=dict)  # k -> 0-100
    tasks: dict[str, dict[int, float]] = Field(default_factory=dict)


class Agreement(AgreementResult):
    source: str
    n_unmatched: int = 0  # human judgements whose id is not an item of the run


# -- metrics ------------------------------------------------------------------------------------


def summarise_metrics(
    item_ids: Sequence[str], values: MetricValues, units: Mapping[str, str]
) -> dict[str, MetricSummary]:
    names = list(dict.fromkeys(name for item_id in item_ids for name in values.get(item_id, {})))
    summaries = {}
    for name in names:
        present = [values[i][name] for i in item_ids if name in values.get(i, {})]
        numbers = [float(v) for v in present if v is not None]
        summaries[name] = MetricSummary(
            score=sum(numbers) / len(numbers) if numbers else None,
            n=len(numbers),
            n_missing=len(present) - len(numbers),
            unit=units.get(name, ""),
        )
    return summaries


# -- breakdowns ---------------------------------------------------------------------------------


def breakdowns(
    items: Mapping[str, Item],
    scores: Sequence[ItemScore],
    groups_of: Callable[[Item], dict[str, str]],
    levels: Sequence[LevelSpec],
    metric_values: MetricValues,
    units: Mapping[str, str],
    *,
    n_boot: int,
    seed: int,
) -> dict[str, dict[str, BreakdownGroup]]:
    members: dict[str, dict[str, list[ItemScore]]] = {}
    for score in scores:
        for dimension, value in groups_of(items[score.item_id]).items():
            members.setdefault(dimension, {}).setdefault(value, []).append(score)
    result: dict[str, dict[str, BreakdownGroup]] = {}
    for dimension, by_value in members.items():
        result[dimension] = {}
        for value in sorted(by_value):
            subset = by_value[value]
            group = score_group(subset, levels, n_boot=n_boot, seed=seed)
            metrics = summarise_metrics([s.item_id for s in subset], metric_values, units)
            result[dimension][value] = BreakdownGroup(tasks=group.tasks, levels=group.levels, metrics=metrics)
    return result


# -- extraction modes ---------------------------------------------------------------------------

ModeFunction = Callable[[str | None, Item, int], Extraction]


def mode_report(
    name: str,
    mode: ModeFunction,
    entries: Sequence[tuple[Item, str | None, Extraction, ItemScore]],
    suite: EvalSuite,
    levels: Sequence[LevelSpec],
    *,
    n_boot: int,
    seed: int,
    fixed: Sequence[ItemScore] = (),
) -> ModeReport:
    """Score `entries` (item, response or None, headline extraction, headline score) with `mode`;
    `fixed` scores (invalid records, scored 0 whatever the mode) keep the headline's denominator."""
    scores: list[ItemScore] = list(fixed)
    differs: list[ModeDifference] = []
    fallbacks = 0
    for item, response, headline, headline_score in entries:
        extraction = mode(response, item, seed)
        fallbacks += extraction.rule.endswith("random_fallback")
        score = suite.score(item, extraction, None)
        scores.append(score)
        if extraction.value != headline.value:
            differs.append(
                ModeDifference(
                    item_id=item.id,
                    headline=headline.value,
                    mode=extraction.value,
                    headline_correct=headline_score.earned >= headline_score.possible,
                    mode_correct=score.earned >= score.possible,
                )
            )
    report = build_report(scores, levels, n_boot=n_boot, seed=seed)
    return ModeReport(
        **report.model_dump(),
        description=(mode.__doc__ or "").strip().splitlines()[0] if mode.__doc__ else name,
        n_fallback=fallbacks,
        differs=differs,
    )


# -- pass@k -------------------------------------------------------------------------------------


def pass_at_k_report(sample_scores: Mapping[tuple[str, int], ItemScore], n_samples: int) -> PassAtK | None:
    if n_samples < 2:
        return None
    per_item: dict[str, list[float]] = {}
    task_of: dict[str, str] = {}
    for (item_id, sample), score in sample_scores.items():
        if sample < n_samples:
            per_item.setdefault(item_id, []).append(score.earned / score.possible if score.possible else 0.0)
            task_of[item_id] = score.task
    complete = {item_id: values for item_id, values in per_item.items() if len(values) == n_samples}
    report = PassAtK(n_samples=n_samples, n_items=len(complete), n_incomplete=len(per_item) - len(complete))
    if not complete:
        return report
    report.overall = {k: 100.0 * v for k, v in pass_at_k_curve(complete).items()}
    for task in dict.fromkeys(task_of[item_id] for item_id in complete):
        subset = {item_id: values for item_id, values in complete.items() if task_of[item_id] == task}
        report.tasks[task] = {k: 100.0 * v for k, v in pass_at_k_curve(subset).items()}
    return report


# -- judge agreement ----------------------------------------------------------------------------


def agreement_report(
    path: Path,
    items: Sequence[Item],
    judgments: Mapping[str, Judgment | None],
    *,
    scale: float | None = None,
) -> Agreement:
    """The judge's decisions (headline sample) against a file of human judgements, each a grade of
    the suite's judge scale (`Suite.judge_scale`; any number when the suite declares none)."""
    human = read_human_judgments(path, allowed=scale_grades(scale))
    by_key: dict[str, str] = {}
    for item in items:
        by_key[item.id] = item.id
        if item.source_id is not None:
            by_key.setdefault(item.source_id, item.id)
    mapped: dict[str, float] = {}
    unmatched = 0
    for key, value in human.items():
        item_id = by_key.get(key)
        if item_id is None:
            unmatched += 1
            continue
        mapped[item_id] = value
    if not mapped:
        raise DataError(f"{path}: none of its {len(human)} ids is an item of this run")
    judge_scores: dict[str, float | None] = {}
    for item_id in mapped:
        judgment = judgments.get(item_id)
        judge_scores[item_id] = judgment.score if judgment is not None and judgment.ok else None
    result = judge_agreement(judge_scores, mapped)
    return Agreement(**result.model_dump(), source=str(path), n_unmatched=unmatched)
