"""The learned text-only baseline: what a simple model that reads only the options could score.

Each heuristic solver tests one artefact; a release can leak through a combination of weak ones
(correct options a little longer AND a little rounder). A logistic regression over per-option
features (length, rank and distance of the value to the options' mean and median, significant
digits, odd format, overlap with the question, a twin among the options, position) learns the
combination from the task's items. A second model adds the overlap with the transcript the items
carry: it is of the `transcript` family, so it counts only where the suite's evaluation setting shows
the transcript to the model (`expvid.audit.setting`); the first never reads the transcript, so a
narration that names every answer cannot make it look like an option artefact. It is cross-validated by item (the model
answering an item never saw it: `GroupKFold`), so on a release without artefacts it scores chance
in expectation, and what it scores above chance bounds what text alone gives a simple model.

Features are relative to the item (each option against the item's other options), so items with
different option counts or units share one model. A task with fewer than `MIN_ITEMS` items is not
fitted (the solver does not apply there).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from expvid.audit.solvers import Scores, Solver
from expvid.audit.views import OptionView

#: Items a task needs before the model is fitted (fewer: the baseline does not apply).
MIN_ITEMS = 40
FOLDS = 5


def _z(values: list[float]) -> list[float]:
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return [(v - mean) / spread for v in values] if spread > 0 else [0.0] * len(values)


def option_features(view: OptionView, *, transcript: bool = False) -> list[list[float]]:
    """One row per option: features of the option relative to the item's other options (plain
    Python: numpy's per-call cost on five-element arrays would dominate a 10,000-item audit);
    `transcript`: with the option's overlap with the item's transcript."""
    k = view.k
    lengths = [float(n) for n in view.lengths]
    longest, shortest = max(lengths), min(lengths)
    columns: list[list[float]] = [
        _z(lengths),
        [float(n == longest) for n in lengths],
        [float(n == shortest) for n in lengths],
        _z([float(len(t.split())) for t in view.texts]),
    ]
    values = view.values
    if values is not None:
        mean = sum(values) / k
        spread = (sum((v - mean) ** 2 for v in values) / k) ** 0.5 or 1.0
        ordered = sorted(values)
        median = (ordered[(k - 1) // 2] + ordered[k // 2]) / 2
        ranks = [ordered.index(v) / max(1, k - 1) for v in values]
        significant = [float(n.significant) for n in view.numbers if n is not None]
        fewest = min(significant)
        columns += [
            [1.0] * k,
            [abs(v - mean) / spread for v in values],
            [abs(v - median) / spread for v in values],
            ranks,
            [abs(r - 0.5) for r in ranks],
            [d - fewest for d in significant],
        ]
    else:
        columns += [[0.0] * k for _ in range(6)]
    keys = view.keys
    question = view.question_words
    words = view.option_words
    columns += [
        [float(keys.count(key) > 1) for key in keys],
        [len(w & question) / len(w) if w else 0.0 for w in words],
        [i / max(1, k - 1) for i in range(k)],
        [float(i == 0) for i in range(k)],
        [float(i == k - 1) for i in range(k)],
    ]
    if transcript:
        context = view.context_words
        columns.append([len(w & context) / len(w) if w else 0.0 for w in words])
    return [list(row) for row in zip(*columns, strict=True)]


def _learned(views: Sequence[OptionView], *, transcript: bool = False) -> list[Scores]:
    if len(views) < MIN_ITEMS or (transcript and not any(view.context_words for view in views)):
        return [None] * len(views)  # too few items; or no transcript to read (the plain model's job)
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    x = np.asarray(
        [row for view in views for row in option_features(view, transcript=transcript)], dtype=float
    )
    y = np.concatenate([np.arange(view.k) == view.correct for view in views]).astype(int)
    groups = np.concatenate([[i] * view.k for i, view in enumerate(views)])
    scores: list[Scores] = [None] * len(views)
    # Rows of one item are contiguous and a fold's test rows come back in order: item by item.
    for train, test in GroupKFold(n_splits=FOLDS).split(x, y, groups):
        model = LogisticRegression(C=1.0, solver="liblinear", max_iter=200)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a fold without signal converges slowly: not an error
            model.fit(x[train], y[train])
        predicted = model.decision_function(x[test])
        held = sorted(set(groups[test]))
        offset = 0
        for index in held:
            k = views[index].k
            scores[index] = [float(s) for s in predicted[offset : offset + k]]
            offset += k
    return scores


def learned_solver() -> Solver:
    """The learned baseline over the options and the question (never the transcript)."""
    return Solver(
        "learned text-only model",
        "learned",
        f"logistic regression over per-option features, {FOLDS}-fold cross-validated by item",
        _learned,
    )


def learned_transcript_solver() -> Solver:
    """The same model with each option's overlap with the item's transcript (family `transcript`)."""
    return Solver(
        "learned text-only model + transcript",
        "transcript",
        f"the learned model with the options' overlap with the transcript, {FOLDS}-fold cross-validated",
        lambda views: _learned(views, transcript=True),
    )
