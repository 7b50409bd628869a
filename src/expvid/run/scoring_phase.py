"""Judging and scoring a run's predictions: shared by `expvid eval`, `expvid score RUN_DIR` and
`expvid score --predictions FILE`.

Scoring never queries the evaluated model again. It extracts each answer, makes sure every item
that needs a judge has a judgment from the configured judge for exactly that answer (judging the
rest), then writes `item_scores.jsonl` (the headline sample of each item), `sample_scores.jsonl`
(every sample, when there are several) and `scores.json`.

The headline is sample 0 of every item. What a suite's paper reports besides (breakdowns,
metrics, other extraction modes, pass@k, judge agreement) is computed by `score_extras` from
the same item scores, when the suite asks for it.

Nothing leaves the denominator: invalid records of the run's tasks are scored 0 (status
`invalid`) beside the items, and every task says how many records it has, how many were scored,
how many failed and why (`failed_by_kind`), how many were invalid and how many answers were cut
by the token limit. The run summary carries the same counts, and why the run is partial.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, FiniteFloat, ValidationError

from expvid.run.config import EvalConfig
from expvid.run.cost import RunCost, RunExtras
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
from expvid.run.selection import Selection
from expvid.schema import ErrorKind, ExtractionStatus, Item, ItemScore, JudgeSettings, Judgment, Prediction
from expvid.schema.dataset import InvalidRecord
from expvid.scoring import Extraction, ScoreReport, build_report
from expvid.scoring.metrics import possible_units, video_id_of
from expvid.suites.protocol import EvalSuite, RunJudge

SAMPLE_SCORES = "sample_scores.jsonl"
OFFLINE_BLANK_NOTE = (
    "Level-3 blanks were judged OFFLINE (normalised match + MiniLM similarity), not by an LLM "
    "judge as in the paper; such scores are not directly comparable to the paper's."
)


class RunSummary(BaseModel):
    """What a `scores.json` describes: which run, which judge, how complete, what went wrong."""

    suite: str
    model: str
    judge: JudgeSettings | None = None
    n_items: int
    n_predictions: int
    n_missing: int
    complete: bool
    #: Annotations and media (names and sizes) when `media_fingerprinted`, else annotations only
    #: (external predictions, and scores written before media were fingerprinted).
    dataset_fingerprint: str | None = None
    annotations_fingerprint: str | None = None
    media_fingerprinted: bool = False
    extraction: str = "strict"
    samples: int = 1
    notes: list[str] = Field(default_factory=list)
    #: Records of the run's tasks (items + invalid records); None in scores written before it existed.
    n_records: int | None = None
    #: Invalid records scored 0 in their task, and those whose task could not be read (in no task).
    n_invalid: int = 0
    n_invalid_unknown_task: int = 0
    #: Items whose headline prediction failed, by `ErrorKind` value (scored 0).
    n_failed: int = 0
    failed_by_kind: dict[str, int] = Field(default_factory=dict)
    n_judge_failed: int = 0
    #: Headline answers cut by the token limit (`finish_reason: length`), scored as they are.
    n_truncated: int = 0
    #: Why the run leaves records of the dataset out (--limit, --tasks); None for a full run.
    partial: str | None = None
    #: Tokens and USD of the run directory's requests (`run.cost`); None in older scores.
    cost: RunCost | None = None
    #: Set when generation stopped at `--max-cost` / `--max-tokens-total` (what and where).
    budget_stop: str | None = None
    #: Requests still waiting in a provider's batches (`--batch` without waiting).
    pending_batch_requests: int = 0

    @property
    def n_problems(self) -> int:
        """Records scored 0 for a reason other than the model's answer: failures and invalid records."""
        return self.n_failed + self.n_invalid + self.n_invalid_unknown_task + self.n_judge_failed


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
    metrics: dict[str, FiniteFloat | None] = Field(default_factory=dict)
    #: Why the item scored 0 without an answer: the prediction's error kind, or `invalid`.
    error_kind: ErrorKind | None = None
    error: str | None = None
    truncated: bool = False


@dataclass(frozen=True)
class DatasetPrint:
    """The fingerprints a scores.json records (see `RunSummary`)."""

    fingerprint: str | None
    annotations: str | None = None
    covers_media: bool = False


@dataclass
class ScoringInputs:
    """What is scored: a model's predictions on the selected records of a dataset."""

    #: The items, the invalid records of the run's tasks (scored 0 in their task) and of unknown
    #: task (counted), and why the run leaves records out (--limit, --tasks).
    selection: Selection
    predictions: dict[tuple[str, int], Prediction]
    model: str
    fingerprint: DatasetPrint
    samples: int = 1
    #: Caveats the report must show with the scores (e.g. `-S with_asr=true` on a built benchmark).
    notes: Sequence[str] = ()

    @property
    def items(self) -> Sequence[Item]:
        return self.selection.items

    @property
    def invalid(self) -> Sequence[InvalidRecord]:
        return self.selection.invalid

    @property
    def partial(self) -> str | None:
        return self.selection.partial


def invalid_score(record: InvalidRecord) -> RunItemScore:
    """An invalid record's line in item_scores.jsonl: 0 of 1, with the problem that made it invalid."""
    return RunItemScore(
        item_id=record.id,
        task=record.task or "?",
        status=ExtractionStatus.INVALID,
        earned=0.0,
        possible=1.0,
        error_kind=ErrorKind.INVALID,
        error=str(record.problem),
    )


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
    """The suite's extra per-item metrics; a value that is not a finite number has no value (None)."""
    hook = getattr(suite, "extra_metrics", None)
    values: MetricValues = hook(entries) if callable(hook) and entries else {}
    return {
        item_id: {name: _finite_or_none(value) for name, value in metrics.items()}
        for item_id, metrics in values.items()
    }


def _finite_or_none(value: float | None) -> float | None:
    return value if value is None or math.isfinite(value) else None


def _score_one(suite: EvalSuite, item: Item, extraction: Extraction, judgment: Judgment | None) -> ItemScore:
    """The suite's score of one answer. A score that is not a finite number (a metric fed a value no
    answer should produce) is refused by `ItemScore`; the answer is then recorded as unparseable,
    scored 0, so one reply costs one item, never the run's report."""
    try:
        score: ItemScore = suite.score(item, extraction, judgment)
    except ValidationError:
        return ItemScore(
            item_id=item.id,
            task=item.task,
            status=ExtractionStatus.UNPARSEABLE,
            extracted=None,
            earned=0.0,
            possible=possible_units(item),
            discipline=item.discipline,
            video_id=video_id_of(item),
            judge_error=None if judgment is None or judgment.ok else judgment.error,
        )
    return score


async def judge_and_score(
    suite: EvalSuite,
    rundir: RunDir,
    inputs: ScoringInputs,
    *,
    judge: RunJudge | None,
    judge_concurrency: int,
    config: EvalConfig,
    progress: RunProgress,
    extras: RunExtras | None = None,
) -> RunScores:
    """Judge what needs a judge, then score; the bootstrap's draws and seed are the run's (`config`),
    and the suite's human judgments, where it ships them, are compared with the judge's when it has them."""
    n_bootstrap, seed = config.n_bootstrap, config.seed or 0
    human_judgments: Path | None = getattr(suite, "human_judgments", None)
    items = list(inputs.items)
    by_id = {item.id: item for item in items}
    dataset_print = inputs.fingerprint
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
    notes: list[str] = list(inputs.notes)
    if to_judge:
        if judge is None:
            raise ValueError("some items need a judge but no judge was configured")
        judgments = await _judge_all(to_judge, judge, rundir, judge_concurrency, progress)
        note = _judge_note(judge)
        if note:
            notes.append(note)
    sample_scores: dict[Key, ItemScore] = {
        key: _score_one(suite, by_id[key[0]], extraction, judgments.get(key))
        for key, extraction in extractions.items()
    }
    headline_keys = [(item.id, 0) for item in items if (item.id, 0) in sample_scores]
    headline = [sample_scores[key] for key in headline_keys]
    invalid = [record for record in inputs.invalid if record.task is not None]
    invalid_scores = [invalid_score(record) for record in invalid]
    entries = [
        (by_id[key[0]], extractions[key], judgments.get(key), inputs.predictions[key].response)
        for key in headline_keys
    ]
    metric_values = _metric_values(suite, entries)
    groups_of = getattr(suite, "groups", None)
    units: dict[str, str] = dict(getattr(suite, "metric_units", {}) or {})

    def line(key: Key) -> str:
        item = by_id[key[0]]
        prediction = inputs.predictions[key]
        record = RunItemScore(
            **sample_scores[key].model_dump(),
            sample=key[1],
            groups=groups_of(item) if callable(groups_of) else {},
            metrics=metric_values.get(item.id, {}) if key[1] == 0 else {},
            error_kind=prediction.error_kind if not prediction.ok else None,
            error=prediction.error,
            truncated=prediction.truncated,
        )
        return record.model_dump_json() + "\n"

    invalid_lines = "".join(score.model_dump_json() + "\n" for score in invalid_scores)
    write_atomic(rundir.root / ITEM_SCORES, "".join(line(key) for key in headline_keys) + invalid_lines)
    if inputs.samples > 1:
        write_atomic(rundir.root / SAMPLE_SCORES, "".join(line(key) for key in sorted(sample_scores)))

    report = build_report([*headline, *invalid_scores], suite.levels, n_boot=n_bootstrap, seed=seed)
    headline_predictions = [inputs.predictions[key] for key in headline_keys]
    _account_tasks(report, items, invalid, headline_predictions)
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
            name: mode_report(
                name,
                mode,
                mode_entries,
                suite,
                suite.levels,
                n_boot=n_bootstrap,
                seed=seed,
                fixed=invalid_scores,
            )
            for name, mode in modes_hook().items()
        }
    result_extras["pass_at_k"] = pass_at_k_report(sample_scores, inputs.samples)
    if human_judgments is not None:
        result_extras["agreement"] = agreement_report(
            human_judgments,
            items,
            {key[0]: judgments.get(key) for key in headline_keys},
            scale=getattr(suite, "judge_scale", None),
        )
    notes_hook = getattr(suite, "score_notes", None)
    if metric_values and callable(notes_hook):
        notes.extend(notes_hook())

    n_missing = len(items) - len(headline)
    if n_missing:
        notes.append(f"{n_missing} selected item(s) have no prediction yet; the run is incomplete")
    if extras is not None and extras.pending_batch_requests:
        notes.append(
            f"{extras.pending_batch_requests} request(s) are waiting in the provider's batches; "
            "re-run the same command to collect them"
        )
    unknown_task = [record for record in inputs.invalid if record.task is None]
    if invalid and (callable(groups_of) or report.disciplines):
        notes.append(
            f"{len(invalid)} invalid record(s) score 0 in their task; having no usable fields, they are in "
            "no discipline or group breakdown"
        )
    failed = [p for p in headline_predictions if not p.ok]
    summary = RunSummary(
        suite=suite.name,
        model=inputs.model,
        judge=judge.manifest_settings() if judge is not None and to_judge else None,
        n_items=len(items),
        n_predictions=len(headline),
        n_missing=n_missing,
        complete=n_missing == 0,
        dataset_fingerprint=dataset_print.fingerprint,
        annotations_fingerprint=dataset_print.annotations,
        media_fingerprinted=dataset_print.covers_media,
        samples=inputs.samples,
        notes=notes,
        n_records=len(items) + len(invalid),
        n_invalid=len(invalid),
        n_invalid_unknown_task=len(unknown_task),
        n_failed=len(failed),
        failed_by_kind=_kinds(failed),
        n_judge_failed=sum(task.n_judge_failed for task in report.tasks.values()),
        n_truncated=sum(p.truncated for p in headline_predictions),
        partial=inputs.partial,
        **(extras.model_dump() if extras is not None else {}),
    )
    result = RunScores(**report.model_dump(), run=summary, **result_extras)
    write_atomic(rundir.scores_path, result.model_dump_json(indent=2) + "\n")
    return result


def _kinds(failed: Sequence[Prediction]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for prediction in failed:
        kind = (prediction.error_kind or ErrorKind.OTHER).value
        counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items()))


def _account_tasks(
    report: ScoreReport,
    items: Sequence[Item],
    invalid: Sequence[InvalidRecord],
    headline: Sequence[Prediction],
) -> None:
    """Fill each task's record accounting: records, invalid, failures by kind, truncated answers."""
    records: dict[str, int] = {}
    for item in items:
        records[item.task] = records.get(item.task, 0) + 1
    n_invalid: dict[str, int] = {}
    for record in invalid:
        task = record.task or "?"
        n_invalid[task] = n_invalid.get(task, 0) + 1
        records[task] = records.get(task, 0) + 1
    for task, summary in report.tasks.items():
        of_task = [p for p in headline if p.task == task]
        summary.n_records = records.get(task, summary.n)
        summary.n_invalid = n_invalid.get(task, 0)
        summary.n_truncated = sum(p.truncated for p in of_task)
        summary.failed_by_kind = _kinds([p for p in of_task if not p.ok])


def read_scores(rundir: RunDir) -> RunScores:
    return RunScores.model_validate_json(rundir.scores_path.read_text(encoding="utf-8"))


def read_item_scores(rundir: RunDir) -> list[ItemScore]:
    path = rundir.item_scores_path
    return [
        ItemScore.model_validate(json.loads(line)) for line in path.read_text().splitlines() if line.strip()
    ]
