"""Judging and scoring a run's predictions: shared by `expvid eval`, `expvid score RUN_DIR` and
`expvid score --predictions FILE`.

Scoring never queries the evaluated model again. It extracts each answer, makes sure every item
that needs a judge has a judgment from the configured judge for exactly that answer (judging the
rest), then writes `item_scores.jsonl` (the headline sample of each item), `sample_scores.jsonl`
(every sample, when there are several) and `scores.json`.

The headline is sample 0 of every item. What a suite's paper reports besides (breakdowns,
metrics, other extraction modes, pass@k, judge agreement) is computed by `score_extras` from
the same item scores, when the suite asks for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from expvid.run.judging import JudgeTask, JudgingPhase, judge_identity, load_judgments
from expvid.run.progress import RunProgress
from expvid.run.rundir import ITEM_SCORES, AppendLog, RunDir, write_atomic
from expvid.run.score_extras import (
    Agreement,
    BreakdownGroup,
    MetricSummary,
    MetricValues,
    ModeReport,
    PassAtK,
    agreement_report,
    breakdowns,
    mode_report,
    pass_at_k_report,
    summarise_metrics,
)
from expvid.schema import Item, ItemScore, JudgeSettings, Judgment, Prediction
from expvid.scoring import Extraction, ScoreReport, build_report
from expvid.suites.protocol import EvalSuite, RunJudge

SAMPLE_SCORES = "sample_scores.jsonl"
OFFLINE_BLANK_NOTE = (
    "Level-3 blanks were judged OFFLINE (normalised match + MiniLM similarity), not by an LLM "
    "judge as in the paper; such scores are not directly comparable to the paper's."
)


class RunSummary(BaseModel):
    """What a `scores.json` describes: which run, which judge, how complete."""

    suite: str
    model: str
    judge: JudgeSettings | None = None
    n_items: int
    n_predictions: int
    n_missing: int
    complete: bool
    dataset_fingerprint: str | None = None
    extraction: str = "strict"
    samples: int = 1
    notes: list[str] = Field(default_factory=list)


class RunScores(ScoreReport):
    """`scores.json`: the aggregate report plus the run it belongs to, and the suite's extras."""

    run: RunSummary
    breakdowns: dict[str, dict[str, BreakdownGroup]] = Field(default_factory=dict)
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    metric_settings: dict[str, Any] = Field(default_factory=dict)
    extraction_modes: dict[str, ModeReport] = Field(default_factory=dict)
    pass_at_k: PassAtK | None = None
    agreement: Agreement | None = None


class RunItemScore(ItemScore):
    """A line of item_scores.jsonl / sample_scores.jsonl: the score plus what it was grouped by."""

    sample: int = 0
    groups: dict[str, str] = Field(default_factory=dict)
    metrics: dict[str, float | None] = Field(default_factory=dict)


@dataclass
class ScoringInputs:
    items: Sequence[Item]
    predictions: dict[tuple[str, int], Prediction]
    samples: int = 1


Key = tuple[str, int]


async def _judge_all(
    to_judge: list[JudgeTask],
    judge: RunJudge,
    rundir: RunDir,
    concurrency: int,
    progress: RunProgress,
) -> dict[Key, Judgment]:
    judgments: dict[Key, Judgment] = {}
    known = load_judgments(rundir.judgments_path, judge.name)
    pending = []
    for task in to_judge:
        found = known.get((task.item.id, task.prediction.sample, task.input_sha256))
        if found is not None and found.ok:
            judgments[(task.item.id, task.prediction.sample)] = found
        else:
            pending.append(task)
    if pending:
        bar = progress.phase(f"judge ({judge.name})", len(pending))
        with AppendLog(rundir.judgments_path) as log:
            phase = JudgingPhase(
                judge, log, concurrency=concurrency, on_done=lambda j: bar.advance(failed=not j.ok)
            )
            for judgment in await phase.run(pending):
                judgments[(judgment.item_id, judgment.sample)] = judgment
    return judgments


def _judge_note(judge: RunJudge) -> str | None:
    if not judge.manifest_settings().offline:
        return None
    note = getattr(judge, "offline_note", None)
    return note if isinstance(note, str) and note else OFFLINE_BLANK_NOTE


def _metric_values(
    suite: EvalSuite, entries: list[tuple[Item, Extraction, Judgment | None, str | None]]
) -> MetricValues:
    hook = getattr(suite, "extra_metrics", None)
    return hook(entries) if callable(hook) and entries else {}


async def judge_and_score(
    *,
    suite: EvalSuite,
    rundir: RunDir,
    inputs: ScoringInputs,
    judge: RunJudge | None,
    judge_concurrency: int,
    model: str,
    fingerprint: str | None,
    n_bootstrap: int,
    seed: int,
    progress: RunProgress,
    human_judgments: Path | None = None,
) -> RunScores:
    items = list(inputs.items)
    by_id = {item.id: item for item in items}
    scored: list[tuple[Item, Prediction]] = [
        (item, prediction)
        for item in items
        for sample in range(inputs.samples)
        if (prediction := inputs.predictions.get((item.id, sample))) is not None
    ]
    extractions: dict[Key, Extraction] = {
        (item.id, pred.sample): suite.extract(pred.response if pred.ok else None, item)
        for item, pred in scored
    }
    identity = judge_identity(judge) if judge is not None else ""
    to_judge = [
        JudgeTask(item, pred, extractions[(item.id, pred.sample)], identity)
        for item, pred in scored
        if suite.needs_judge(item, extractions[(item.id, pred.sample)])
    ]
    judgments: dict[Key, Judgment] = {}
    notes: list[str] = []
    if to_judge:
        if judge is None:
            raise ValueError("some items need a judge but no judge was configured")
        judgments = await _judge_all(to_judge, judge, rundir, judge_concurrency, progress)
        note = _judge_note(judge)
        if note:
            notes.append(note)
    sample_scores: dict[Key, ItemScore] = {
        key: suite.score(by_id[key[0]], extraction, judgments.get(key))
        for key, extraction in extractions.items()
    }
    headline_keys = [(item.id, 0) for item in items if (item.id, 0) in sample_scores]
    headline = [sample_scores[key] for key in headline_keys]
    entries = [
        (by_id[key[0]], extractions[key], judgments.get(key), inputs.predictions[key].response)
        for key in headline_keys
    ]
    metric_values = _metric_values(suite, entries)
    groups_of = getattr(suite, "groups", None)
    units: dict[str, str] = dict(getattr(suite, "metric_units", {}) or {})

    def line(key: Key) -> str:
        item = by_id[key[0]]
        record = RunItemScore(
            **sample_scores[key].model_dump(),
            sample=key[1],
            groups=groups_of(item) if callable(groups_of) else {},
            metrics=metric_values.get(item.id, {}) if key[1] == 0 else {},
        )
        return record.model_dump_json() + "\n"

    write_atomic(rundir.root / ITEM_SCORES, "".join(line(key) for key in headline_keys))
    if inputs.samples > 1:
        write_atomic(rundir.root / SAMPLE_SCORES, "".join(line(key) for key in sorted(sample_scores)))

    report = build_report(headline, suite.levels, n_boot=n_bootstrap, seed=seed)
    result_extras: dict[str, Any] = {}
    if callable(groups_of):
        result_extras["breakdowns"] = breakdowns(
            by_id, headline, groups_of, suite.levels, metric_values, units, n_boot=n_bootstrap, seed=seed
        )
    if metric_values:
        result_extras["metrics"] = summarise_metrics([s.item_id for s in headline], metric_values, units)
    settings_hook = getattr(suite, "metric_settings", None)
    if metric_values and callable(settings_hook):
        result_extras["metric_settings"] = settings_hook()
    modes_hook = getattr(suite, "extraction_modes", None)
    if callable(modes_hook):
        mode_entries = [
            (by_id[key[0]], inputs.predictions[key].response if inputs.predictions[key].ok else None,
             extractions[key], sample_scores[key])
            for key in headline_keys
        ]  # fmt: skip
        result_extras["extraction_modes"] = {
            name: mode_report(name, mode, mode_entries, suite, suite.levels, n_boot=n_bootstrap, seed=seed)
            for name, mode in modes_hook().items()
        }
    result_extras["pass_at_k"] = pass_at_k_report(sample_scores, inputs.samples)
    if human_judgments is not None:
        result_extras["agreement"] = agreement_report(
            human_judgments, items, {key[0]: judgments.get(key) for key in headline_keys}
        )
    notes_hook = getattr(suite, "score_notes", None)
    if metric_values and callable(notes_hook):
        notes.extend(notes_hook())

    n_missing = len(items) - len(headline)
    if n_missing:
        notes.append(f"{n_missing} selected item(s) have no prediction yet; the run is incomplete")
    summary = RunSummary(
        suite=suite.name,
        model=model,
        judge=judge.manifest_settings() if judge is not None and to_judge else None,
        n_items=len(items),
        n_predictions=len(headline),
        n_missing=n_missing,
        complete=n_missing == 0,
        dataset_fingerprint=fingerprint,
        samples=inputs.samples,
        notes=notes,
    )
    result = RunScores(**report.model_dump(), run=summary, **result_extras)
    write_atomic(rundir.scores_path, result.model_dump_json(indent=2) + "\n")
    return result


def read_scores(rundir: RunDir) -> RunScores:
    return RunScores.model_validate_json(rundir.scores_path.read_text(encoding="utf-8"))


def read_item_scores(rundir: RunDir) -> list[ItemScore]:
    path = rundir.item_scores_path
    return [
        ItemScore.model_validate(json.loads(line)) for line in path.read_text().splitlines() if line.strip()
    ]
