"""The learned text-only baseline: what a simple model that reads only the options could score.

Each heuristic solver tests one artefact; a release can leak through a combination of weak ones
(correct options a little longer AND a little rounder). A logistic regression over per-option
features (length, rank and distance of the value to the options' mean and median, significant
digits, odd format, overlap with the question and the transcript, a twin among the options,
position) learns the combination from the task's items. It is cross-validated by item (the model
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
import numpy.typing as npt

from expvid.audit.solvers import Scores, Solver
from expvid.audit.views import OptionView

#: Items a task needs before the model is fitted (fewer: the baseline does not apply).
MIN_ITEMS = 40
FOLDS = 5


def _z(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def option_features(view: OptionView) -> npt.NDArray[np.float64]:
    """One row per option: features of the option relative to the item's other options."""
    k = view.k
    lengths = np.asarray(view.lengths, dtype=float)
    words = np.asarray([len(t.split()) for t in view.texts], dtype=float)
    columns: list[npt.NDArray[np.float64]] = [
        _z(lengths),
        (lengths == lengths.max()).astype(float),
        (lengths == lengths.min()).astype(float),
        _z(words),
    ]
    values = view.values
    if values is not None:
        v = np.asarray(values, dtype=float)
        spread = float(v.std()) or 1.0
        ranks = np.argsort(np.argsort(v)) / max(1, k - 1)
        significant = np.asarray([n.significant for n in view.numbers if n is not None], dtype=float)
        columns += [
            np.ones(k),
            np.abs(v - v.mean()) / spread,
            np.abs(v - np.median(v)) / spread,
            ranks,
            np.abs(ranks - 0.5),
            significant - significant.min(),
        ]
    else:
        columns += [np.zeros(k)] * 6
    keys = view.keys
    twins = np.asarray([sum(1 for other in keys if other == key) > 1 for key in keys], dtype=float)
    question = view.question_words
    context = view.context_words
    columns += [
        twins,
        np.asarray([len(w & question) / len(w) if w else 0.0 for w in view.option_words]),
        np.asarray([len(w & context) / len(w) if w else 0.0 for w in view.option_words]),
        np.arange(k) / max(1, k - 1),
        (np.arange(k) == 0).astype(float),
        (np.arange(k) == k - 1).astype(float),
    ]
    return np.column_stack(columns)


def _learned(views: Sequence[OptionView]) -> list[Scores]:
    if len(views) < MIN_ITEMS:
        return [None] * len(views)
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    blocks = [option_features(view) for view in views]
    x = np.vstack(blocks)
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
    return Solver(
        "learned text-only model",
        "learned",
        f"logistic regression over per-option features, {FOLDS}-fold cross-validated by item",
        _learned,
    )
