"""Controls from model runs: how much the items need their video.

Runs of one release are paired by model (`RunRecord.base_model`: `blind:M` and `M` are one model)
and by frames control (`--frames-control`: full, none, single, shuffled). Per task and model:

- multi-modal gain: accuracy with every frame minus accuracy without any (on the items both runs
  scored): what the video adds;
- leakage: accuracy without frames against the task's chance (MMStar's "multi-modal leakage": a
  question answerable from its text); flagged when the exact lower bound beats chance after a
  Bonferroni correction over the tests made;
- single-frame sufficiency: accuracy with the middle frame only, and the share of the multi-modal
  gain it already gives (studies of single-frame bias in video QA);
- order sensitivity: accuracy with every frame minus accuracy with the frames shuffled: what the
  order of the frames adds (meaningful for ordering and temporal tasks; reported for all).

Per item: how many no-frames models answer it correctly. An item is flagged "answerable without the
video" when at least `MIN_MODELS` of them do and that many correct answers are unlikely by
guessing (binomial tail at the item's chance at most `ITEM_P`); a free-text item has chance 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scipy.stats import binom

from expvid.audit import stats
from expvid.audit.result import ItemResult
from expvid.audit.runs import RunRecord
from expvid.schema import AnswerType, Item

MIN_MODELS = 2
ITEM_P = 0.05
CONTROLS = ("full", "none", "single", "shuffled")


def item_chance(item: Item) -> float | None:
    """Chance of a guess: 1/options for a choice; 0 for free text and blanks; None when unknown."""
    if item.answer_type is AnswerType.CHOICE and item.options:
        return 1.0 / len(item.options)
    if item.answer_type in (AnswerType.FREE_TEXT, AnswerType.BLANKS):
        return 0.0
    return None


def correct(score: float) -> bool:
    return score >= 0.5


def _accuracy(run: RunRecord, ids: Sequence[str]) -> tuple[float, int] | None:
    scores = [run.outcomes[i].score for i in ids if i in run.outcomes]
    return (sum(scores), len(scores)) if scores else None


def _paired(first: RunRecord, second: RunRecord, ids: Sequence[str]) -> tuple[float, int] | None:
    common = [i for i in ids if i in first.outcomes and i in second.outcomes]
    if not common:
        return None
    difference = sum(first.outcomes[i].score - second.outcomes[i].score for i in common) / len(common)
    return difference, len(common)


def by_model(runs: Sequence[RunRecord]) -> dict[str, dict[str, RunRecord]]:
    """model -> control -> run (the first run given of each pair)."""
    table: dict[str, dict[str, RunRecord]] = {}
    for run in runs:
        table.setdefault(run.base_model, {}).setdefault(run.control, run)
    return table


def task_controls(
    items: Sequence[Item], runs: Sequence[RunRecord], alpha: float = stats.ALPHA
) -> list[dict[str, Any]]:
    """One entry per (task, model) with the controls its runs allow (see the module docstring)."""
    tasks: dict[str, list[Item]] = {}
    for item in items:
        tasks.setdefault(item.task, []).append(item)
    models = by_model(runs)
    entries: list[dict[str, Any]] = []
    for task, task_items in tasks.items():
        ids = [item.id for item in task_items]
        chances = [item_chance(item) for item in task_items]
        chance = (
            None
            if any(c is None for c in chances)
            else sum(c for c in chances if c is not None) / len(chances)
        )
        for model, controls in models.items():
            entry: dict[str, Any] = {"task": task, "model": model, "chance": chance}
            for control in CONTROLS:
                if control in controls:
                    found = _accuracy(controls[control], ids)
                    if found is not None:
                        hits, n = found
                        entry[control] = {"accuracy": round(hits / n, 6), "n": n, "hits": round(hits, 6)}
            if len(entry) == 3:
                continue
            if "full" in controls and "none" in controls:
                gain = _paired(controls["full"], controls["none"], ids)
                if gain is not None:
                    entry["multimodal_gain"] = {"value": round(gain[0], 6), "n": gain[1]}
            if "single" in controls:
                entry["single_frame"] = _single(controls, ids)
            if "full" in controls and "shuffled" in controls:
                order = _paired(controls["full"], controls["shuffled"], ids)
                if order is not None:
                    entry["order_sensitivity"] = {"value": round(order[0], 6), "n": order[1]}
            entries.append(entry)
    _leakage(entries, alpha)
    return entries


def _single(controls: Mapping[str, RunRecord], ids: Sequence[str]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if "full" in controls:
        paired = _paired(controls["full"], controls["single"], ids)
        if paired is not None:
            found["full_minus_single"] = round(paired[0], 6)
    if "full" in controls and "none" in controls:
        gain = _paired(controls["full"], controls["none"], ids)
        one = _paired(controls["single"], controls["none"], ids)
        if gain is not None and one is not None and gain[0] > 0:
            found["share_of_gain"] = round(one[0] / gain[0], 4)
    return found


def _leakage(entries: list[dict[str, Any]], alpha: float) -> None:
    tested = [e for e in entries if "none" in e and e["chance"] is not None]
    level = alpha / max(1, len(tested))
    for entry in tested:
        none = entry["none"]
        interval = stats.clopper_pearson(none["hits"], none["n"])
        bound = stats.lower_bound(none["hits"], none["n"], level)
        entry["leakage"] = {
            "accuracy": none["accuracy"],
            "chance": entry["chance"],
            "ci_low": round(interval.low, 6),
            "ci_high": round(interval.high, 6),
            "leaks": bound > entry["chance"] + 1e-12,
        }


def item_controls(
    items: Sequence[Item], runs: Sequence[RunRecord], results: Mapping[str, ItemResult]
) -> dict[str, dict[str, int]]:
    """Per item, how many models answered it correctly under each control (and out of how many);
    flags the items answerable without the video."""
    table: dict[str, dict[str, int]] = {}
    for item in items:
        counts: dict[str, int] = {}
        for run in runs:
            outcome = run.outcomes.get(item.id)
            if outcome is None:
                continue
            counts[f"{run.control}_runs"] = counts.get(f"{run.control}_runs", 0) + 1
            counts[f"{run.control}_correct"] = counts.get(f"{run.control}_correct", 0) + int(
                correct(outcome.score)
            )
        if counts:
            table[item.id] = counts
        blind = counts.get("none_correct", 0)
        chance = item_chance(item)
        if blind >= MIN_MODELS and chance is not None:
            tail = float(binom.sf(blind - 1, counts["none_runs"], chance)) if chance > 0 else 0.0
            if tail <= ITEM_P and item.id in results:
                results[item.id].flag(
                    "answerable without the video",
                    f"{blind} of {counts['none_runs']} model(s) answer it correctly without any frame "
                    f"(chance {chance:.0%}; P = {tail:.2g} by guessing)",
                )
    return table
