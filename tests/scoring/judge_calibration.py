"""Measuring the offline judge on labelled (gold, predicted, label) pairs, and choosing its threshold.

The threshold only matters for pairs no rule decides, so the sweep computes rule decisions and
similarities once and re-thresholds them; precision and recall are those of the whole judge
(rules included), with "correct" as the positive class. A false positive inflates a model's
score, so among thresholds with equal F1 the highest (most precise) is chosen.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from expvid.scoring.judges.offline_blank import BlankDecision, OfflineBlankJudge, rule_decision


@dataclass(frozen=True)
class LabelledPair:
    gold: str
    predicted: str
    label: bool
    kind: str = ""


@dataclass(frozen=True)
class Operating:
    threshold: float
    precision: float
    recall: float
    f1: float
    accuracy: float
    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int


def read_pairs(path: Path) -> list[LabelledPair]:
    pairs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            pairs.append(
                LabelledPair(
                    record["gold"], record["predicted"], bool(record["label"]), record.get("kind", "")
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a labelled pair ({exc})") from exc
    return pairs


def _operating(threshold: float, pairs: Sequence[LabelledPair], verdicts: Sequence[bool]) -> Operating:
    tp = sum(v and p.label for v, p in zip(verdicts, pairs, strict=True))
    fp = sum(v and not p.label for v, p in zip(verdicts, pairs, strict=True))
    fn = sum(not v and p.label for v, p in zip(verdicts, pairs, strict=True))
    tn = len(pairs) - tp - fp - fn
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Operating(threshold, precision, recall, f1, (tp + tn) / len(pairs), tp, fp, fn, tn)


def sweep(
    judge: OfflineBlankJudge,
    pairs: Sequence[LabelledPair],
    thresholds: Sequence[float],
) -> list[Operating]:
    """Precision/recall/F1 of the whole judge at each threshold."""
    rules: list[BlankDecision | None] = [rule_decision(p.gold, p.predicted) for p in pairs]
    pending = [i for i, r in enumerate(rules) if r is None]
    similarities = dict(
        zip(
            pending,
            judge._embedder.similarity([(pairs[i].gold, pairs[i].predicted) for i in pending]),
            strict=True,
        )
    )
    results = []
    for threshold in thresholds:
        verdicts = [
            rule.verdict if rule is not None else similarities[i] >= threshold for i, rule in enumerate(rules)
        ]
        results.append(_operating(threshold, pairs, verdicts))
    return results


def choose_threshold(results: Sequence[Operating]) -> Operating:
    """Best F1; ties go to the higher threshold (fewer false positives)."""
    return max(results, key=lambda r: (round(r.f1, 9), r.threshold))


def evaluate(judge: OfflineBlankJudge, pairs: Sequence[LabelledPair]) -> Operating:
    """The judge as configured, pair by pair through `decide_many` (no shortcut)."""
    decisions = judge.decide_many([(p.gold, p.predicted) for p in pairs])
    return _operating(judge.threshold, pairs, [d.verdict for d in decisions])
