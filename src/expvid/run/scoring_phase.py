"""Judging and scoring a run's predictions: shared by `expvid eval`, `expvid score RUN_DIR` and
`expvid score --predictions FILE`.

Scoring never queries the evaluated model again. It extracts each answer, makes sure every item
that needs a judge has a judgment from the configured judge for exactly that answer (judging the
rest), then writes `item_scores.jsonl` and `scores.json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from expvid.run.judging import JudgeTask, JudgingPhase, judge_identity, load_judgments
from expvid.run.progress import RunProgress
from expvid.run.rundir import ITEM_SCORES, AppendLog, RunDir, write_atomic
from expvid.schema import Item, ItemScore, JudgeSettings, Judgment, Prediction
from expvid.scoring import ScoreReport, build_report
from expvid.suites.protocol import EvalSuite, RunJudge


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
    notes: list[str] = Field(default_factory=list)


class RunScores(ScoreReport):
    """`scores.json`: the aggregate report plus the run it belongs to."""

    run: RunSummary


@dataclass
class ScoringInputs:
    items: Sequence[Item]
    predictions: dict[tuple[str, int], Prediction]


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
) -> RunScores:
    items = list(inputs.items)
    scored: list[tuple[Item, Prediction]] = [
        (item, inputs.predictions[(item.id, 0)]) for item in items if (item.id, 0) in inputs.predictions
    ]
    extractions = {item.id: suite.extract(pred.response if pred.ok else None, item) for item, pred in scored}
    identity = judge_identity(judge) if judge is not None else ""
    to_judge = [
        JudgeTask(item, pred, extractions[item.id], identity)
        for item, pred in scored
        if suite.needs_judge(item, extractions[item.id])
    ]
    judgments: dict[str, Judgment] = {}
    notes: list[str] = []
    if to_judge:
        if judge is None:
            raise ValueError("some items need a judge but no judge was configured")
        known = load_judgments(rundir.judgments_path, judge.name)
        pending = []
        for task in to_judge:
            found = known.get((task.item.id, task.prediction.sample, task.input_sha256))
            if found is not None and found.ok:
                judgments[task.item.id] = found
            else:
                pending.append(task)
        if pending:
            bar = progress.phase(f"judge ({judge.name})", len(pending))
            with AppendLog(rundir.judgments_path) as log:
                phase = JudgingPhase(
                    judge, log, concurrency=judge_concurrency, on_done=lambda j: bar.advance(failed=not j.ok)
                )
                for judgment in await phase.run(pending):
                    judgments[judgment.item_id] = judgment
        if judge.manifest_settings().offline:
            notes.append(
                "Level-3 blanks were judged OFFLINE (normalised match + MiniLM similarity), not by an LLM "
                "judge as in the paper; such scores are not directly comparable to the paper's."
            )
    item_scores: list[ItemScore] = [
        suite.score(item, extractions[item.id], judgments.get(item.id)) for item, _ in scored
    ]
    lines = "".join(score.model_dump_json() + "\n" for score in item_scores)
    write_atomic(rundir.root / ITEM_SCORES, lines)
    report = build_report(item_scores, suite.levels, n_boot=n_bootstrap, seed=seed)
    n_missing = len(items) - len(scored)
    if n_missing:
        notes.append(f"{n_missing} selected item(s) have no prediction yet; the run is incomplete")
    summary = RunSummary(
        suite=suite.name,
        model=model,
        judge=judge.manifest_settings() if judge is not None and to_judge else None,
        n_items=len(items),
        n_predictions=len(scored),
        n_missing=n_missing,
        complete=n_missing == 0,
        dataset_fingerprint=fingerprint,
        notes=notes,
    )
    result = RunScores(**report.model_dump(), run=summary)
    write_atomic(rundir.scores_path, result.model_dump_json(indent=2) + "\n")
    return result


def read_scores(rundir: RunDir) -> RunScores:
    return RunScores.model_validate_json(rundir.scores_path.read_text(encoding="utf-8"))


def read_item_scores(rundir: RunDir) -> list[ItemScore]:
    path = rundir.item_scores_path
    return [
        ItemScore.model_validate(json.loads(line)) for line in path.read_text().splitlines() if line.strip()
    ]
