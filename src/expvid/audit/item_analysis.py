"""Item analysis across models (classical test theory, with models as the test takers).

From the runs that see the video (frames control "full"), one per model:

- difficulty: the share of models that answer the item correctly (its mean score);
- discrimination: the point-biserial correlation between the item's scores and the models' totals
  on the other items of its task (the corrected item-total correlation; None with fewer than
  three models or no spread); an item that the weaker models get and the stronger miss (negative)
  measures something other than the task;
- distractors no model picks: options nobody chose (they do no work: the item has fewer real
  options than it shows);
- candidate wrong key: every model (at least `MIN_MODELS_KEY` of them, each with a readable answer)
  gets the item wrong and all pick the same other option: the key is worth a second look. Three
  models guessing at random agree on one wrong option of four with probability 3/64.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from expvid.audit.controls import by_model, correct
from expvid.audit.result import ItemResult
from expvid.audit.runs import RunRecord
from expvid.schema import AnswerType, Item

MIN_MODELS_KEY = 3


def _correlation(x: Sequence[float], y: Sequence[float]) -> float | None:
    if len(x) < 3 or statistics.pstdev(x) == 0 or statistics.pstdev(y) == 0:
        return None
    return round(statistics.correlation(x, y), 4)


def analyse_items(
    items: Sequence[Item], runs: Sequence[RunRecord], results: Mapping[str, ItemResult]
) -> dict[str, Any] | None:
    """The analysis (None with fewer than two models that see the video); flags candidate wrong keys."""
    seeing = [controls["full"] for controls in by_model(runs).values() if "full" in controls]
    if len(seeing) < 2:
        return None
    tasks: dict[str, list[Item]] = {}
    for item in items:
        tasks.setdefault(item.task, []).append(item)
    per_item: dict[str, dict[str, Any]] = {}
    per_task: dict[str, dict[str, Any]] = {}
    for task, task_items in tasks.items():
        totals = {
            id(run): sum(run.outcomes[i.id].score for i in task_items if i.id in run.outcomes)
            for run in seeing
        }
        unpicked_total = distractors_total = 0
        difficulties = []
        for item in task_items:
            scored = [(run, run.outcomes[item.id]) for run in seeing if item.id in run.outcomes]
            if not scored:
                continue
            scores = [outcome.score for _, outcome in scored]
            rest = [totals[id(run)] - outcome.score for run, outcome in scored]
            entry: dict[str, Any] = {
                "models": len(scored),
                "difficulty": round(sum(scores) / len(scores), 4),
                "discrimination": _correlation(scores, rest),
            }
            difficulties.append(entry["difficulty"])
            if item.answer_type is AnswerType.CHOICE and item.options:
                answered = [outcome for _, outcome in scored if outcome.answered]
                picked = {outcome.picked for outcome in answered}
                unpicked = [
                    letter for letter in item.options if letter != item.answer and letter not in picked
                ]
                entry["unpicked_distractors"] = unpicked
                unpicked_total += len(unpicked)
                distractors_total += len(item.options) - 1
                wrong = {outcome.picked for outcome in answered if not correct(outcome.score)}
                if (
                    len(answered) == len(scored) >= MIN_MODELS_KEY
                    and len(wrong) == 1
                    and not any(correct(s) for s in scores)
                ):
                    (letter,) = wrong
                    if letter is not None and letter != item.answer:
                        entry["candidate_key"] = letter
                        if item.id in results:
                            results[item.id].flag(
                                "candidate wrong key",
                                f"all {len(scored)} models answer {letter} "
                                f'("{item.options.get(letter, "")}"), none the key {item.answer}',
                            )
            per_item[item.id] = entry
        if difficulties:
            per_task[task] = {
                "mean_difficulty": round(sum(difficulties) / len(difficulties), 4),
                "unpicked_distractor_share": round(unpicked_total / distractors_total, 4)
                if distractors_total
                else None,
            }
    return {"models": [run.base_model for run in seeing], "tasks": per_task, "items": per_item}
