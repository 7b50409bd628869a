"""The judging phase: items whose score needs a judge (ExpVid Level 3) get one decision each.

A judgment is reused only when it came from the same judge for the same extracted answer
(`input_sha256`), so re-scoring with another judge, or after a prediction was redone, judges again.
Judge failures are recorded as failures (and retried on the next pass), never as zeros.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from expvid.run.rundir import AppendLog, read_records
from expvid.schema import Item, Judgment, Prediction, RecordProblem
from expvid.scoring import Extraction
from expvid.suites.protocol import RunJudge


def judge_identity(judge: RunJudge) -> str:
    """Hash of everything that defines a judge (model, endpoint, prompt, thresholds; no secrets)."""
    return hashlib.sha256(json.dumps(judge.describe(), sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class JudgeTask:
    item: Item
    prediction: Prediction
    extraction: Extraction
    judge_identity: str = ""

    @property
    def input_sha256(self) -> str:
        """What was judged and by whom: a judgment is reused only when all of it is unchanged."""
        payload = json.dumps(
            {
                "extracted": self.extraction.value,
                "response": self.prediction.response,
                "judge": self.judge_identity,
            },
            default=str,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def load_judgments(log_path: Path, judge_name: str) -> dict[tuple[str, int, str], Judgment]:
    """Latest judgment per (item, sample, input hash) from this judge; corrupt lines are skipped."""
    latest: dict[tuple[str, int, str], Judgment] = {}
    for _, record in read_records(log_path, Judgment):
        if isinstance(record, RecordProblem) or record.judge != judge_name:
            continue
        latest[(record.item_id, record.sample, record.input_sha256 or "")] = record
    return latest


class JudgingPhase:
    def __init__(
        self,
        judge: RunJudge,
        log: AppendLog,
        *,
        concurrency: int,
        on_done: Callable[[Judgment], None] | None = None,
    ) -> None:
        self.judge = judge
        self.log = log
        self._slots = asyncio.Semaphore(concurrency)
        self.on_done = on_done

    async def run(self, tasks: Sequence[JudgeTask]) -> list[Judgment]:
        return list(await asyncio.gather(*(self._one(task) for task in tasks)))

    async def _one(self, task: JudgeTask) -> Judgment:
        async with self._slots:
            try:
                judgment = await self.judge.judge(task.item, task.extraction, task.prediction.response)
            except Exception as error:  # a judge bug must not cost the run; it is recorded as a failure
                judgment = Judgment(
                    item_id=task.item.id,
                    task=task.item.task,
                    judge=self.judge.name,
                    error=f"judge crashed: {error!r}",
                )
            judgment = judgment.model_copy(
                update={"input_sha256": task.input_sha256, "sample": task.prediction.sample}
            )
            self.log.append(judgment)
        if self.on_done is not None:
            self.on_done(judgment)
        return judgment
