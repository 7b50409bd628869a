"""How well a graded judge agrees with people, as papers that validate an LLM judge report it.

A paper picks its judge prompt and model by comparing the judge's decisions with a person's on the
same predictions, and reports the Pearson correlation coefficient and the match accuracy (the share
of items where the two give the same grade). `judge_agreement` computes both, plus the confusion
counts that make a low number explainable.

Human judgements come from a file: JSONL lines `{"id": ..., "score": N}` (also accepted:
`question_id` for the id, `judge` or `human` for the score) or one JSON object `{id: score}`, each
score one of the judge's grades (`scale_grades`: 0..top of an integer scale; 0, 1 or 2 unless
told). Every unusable line is reported with its file:line; nothing is silently skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from expvid.schema import DataError, RecordProblem, read_jsonl

#: The grades of a ternary judge (0 no match, 1 partial, 2 match): what a file is read against unless told.
TERNARY_GRADES: tuple[float, ...] = (0, 1, 2)
_ID_KEYS = ("id", "question_id", "item_id")
_SCORE_KEYS = ("score", "judge", "human")


class AgreementResult(BaseModel):
    n: int
    pearson: float | None = None  # None when either side is constant (undefined)
    accuracy: float | None = None  # share of exact matches, 0..1
    judge_mean: float | None = None
    human_mean: float | None = None
    #: confusion[human][judge] = count
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    #: items with a human judgement but no usable judge decision (never counted as agreement)
    n_without_judge: int = 0


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) != len(ys):
        raise ValueError("pearson: sequences differ in length")
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / math.sqrt(sxx * syy)


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def judge_agreement(judge: dict[str, float | None], human: dict[str, float]) -> AgreementResult:
    """Agreement over the items both judged; `judge` values of None are judge failures."""
    pairs = [(judge[key], value) for key, value in human.items() if judge.get(key) is not None]
    missing = sum(1 for key in human if judge.get(key) is None)
    if not pairs:
        return AgreementResult(n=0, n_without_judge=missing)
    judge_values = [float(j) for j, _ in pairs if j is not None]
    human_values = [float(h) for _, h in pairs]
    confusion: dict[str, dict[str, int]] = {}
    for j, h in zip(judge_values, human_values, strict=True):
        row = confusion.setdefault(_label(h), {})
        row[_label(j)] = row.get(_label(j), 0) + 1
    matches = sum(1 for j, h in zip(judge_values, human_values, strict=True) if j == h)
    return AgreementResult(
        n=len(pairs),
        pearson=pearson(judge_values, human_values),
        accuracy=matches / len(pairs),
        judge_mean=sum(judge_values) / len(pairs),
        human_mean=sum(human_values) / len(pairs),
        confusion=confusion,
        n_without_judge=missing,
    )


def _score(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def scale_grades(top: float | None) -> tuple[float, ...] | None:
    """The grades 0..`top` of an integer judge scale; None (any finite number) for another scale."""
    if top is None or not float(top).is_integer() or top < 1:
        return None
    return tuple(range(int(top) + 1))


def _grades_text(allowed: Sequence[float] | None) -> str:
    if allowed is None:
        return "a number"
    labels = [_label(value) for value in allowed]
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} or {labels[-1]}"


def read_human_judgments(path: Path, *, allowed: Sequence[float] | None = TERNARY_GRADES) -> dict[str, float]:
    """Human scores by item id (each one of `allowed`, any finite number when None); `DataError`
    listing every bad line (file:line) if any."""
    if not path.is_file():
        raise DataError(f"{path}: human judgements file not found")
    text = path.read_text(encoding="utf-8-sig")
    whole = _whole_json(text)
    if isinstance(whole, dict) and not (
        any(k in whole for k in _ID_KEYS) and any(k in whole for k in _SCORE_KEYS)
    ):
        return _from_mapping(path, whole, allowed)
    scores: dict[str, float] = {}
    problems: list[RecordProblem] = []
    for number, record in read_jsonl(path):
        if isinstance(record, RecordProblem):
            problems.append(record)
            continue
        key = next((record[k] for k in _ID_KEYS if k in record), None)
        raw = next((record[k] for k in _SCORE_KEYS if k in record), None)
        value = _score(raw)
        if key is None or value is None:
            problems.append(
                RecordProblem(path, number, f'expected {{"id": ..., "score": {_grades_text(allowed)}}}')
            )
            continue
        if allowed is not None and value not in allowed:
            problems.append(RecordProblem(path, number, f"score {raw!r} is not one of {list(allowed)}"))
            continue
        if str(key) in scores:
            problems.append(RecordProblem(path, number, f"second judgement for {key!r}"))
            continue
        scores[str(key)] = value
    if problems:
        raise DataError(problems)
    return scores


def _whole_json(text: str) -> object:
    """The file as one JSON value, or None when it is not one (then it is read as JSONL)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


def _from_mapping(path: Path, data: dict[str, object], allowed: Sequence[float] | None) -> dict[str, float]:
    scores: dict[str, float] = {}
    bad = []
    for key, raw in data.items():
        value = _score(raw)
        if value is None or (allowed is not None and value not in allowed):
            bad.append(f"{key!r}: {raw!r}")
            continue
        scores[str(key)] = value
    if bad:
        raise DataError(
            f"{path}: unusable scores for {', '.join(bad[:5])}" + (" ..." if len(bad) > 5 else "")
        )
    return scores
