"""Confidence intervals and paired tests that respect how ExpVid items are grouped.

Items cut from the same experiment video are not independent (same lab, same camera, same
narration), so resampling items would understate the uncertainty. Both procedures resample or
permute whole videos (clusters): an item without a `video_id` is its own cluster.

Everything is vectorised: per-cluster sums (clusters x tasks) are multiplied by a matrix of
cluster multiplicities (replicates x clusters), so every task score and level average of every
replicate comes out of two matrix products. Replicates are processed in chunks so memory stays
bounded for item-level clusters too. Seeds are fixed, so the same scores give the same intervals.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from expvid.schema import ItemScore
from expvid.scoring.levels import LevelSpec, combine

FloatArray = npt.NDArray[np.float64]
_CHUNK_CELLS = 2_000_000  # replicates x clusters per chunk (16 MB of float64)


@dataclass(frozen=True)
class ClusterTable:
    """Per-cluster totals: `earned`, `possible` and item `count`, each (clusters x tasks)."""

    clusters: tuple[str, ...]
    tasks: tuple[str, ...]
    earned: FloatArray
    possible: FloatArray
    count: FloatArray


def cluster_key(score: ItemScore) -> str:
    return f"video:{score.video_id}" if score.video_id is not None else f"item:{score.item_id}"


def cluster_table(scores: Sequence[ItemScore], tasks: Sequence[str]) -> ClusterTable:
    clusters = tuple(dict.fromkeys(cluster_key(s) for s in scores))
    c_index = {c: i for i, c in enumerate(clusters)}
    t_index = {t: i for i, t in enumerate(tasks)}
    shape = (len(clusters), len(tasks))
    earned, possible, count = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    rows = np.array([c_index[cluster_key(s)] for s in scores], dtype=np.int64)
    cols = np.array([t_index[s.task] for s in scores], dtype=np.int64)
    np.add.at(earned, (rows, cols), [s.earned for s in scores])
    np.add.at(possible, (rows, cols), [s.possible for s in scores])
    np.add.at(count, (rows, cols), 1.0)
    return ClusterTable(clusters, tuple(tasks), earned, possible, count)


def statistic_names(tasks: Sequence[str], levels: Sequence[LevelSpec]) -> list[str]:
    return [*tasks, *(spec.name for spec in levels)]


def statistics(
    earned: FloatArray,
    possible: FloatArray,
    count: FloatArray,
    tasks: Sequence[str],
    levels: Sequence[LevelSpec],
) -> FloatArray:
    """Task scores (0-100) then level averages, along the last axis; NaN where undefined."""
    with np.errstate(invalid="ignore", divide="ignore"):
        task_scores = np.where(possible > 0, 100.0 * earned / possible, np.nan)
    columns = [task_scores]
    t_index = {t: i for i, t in enumerate(tasks)}
    for spec in levels:
        idx = [t_index[t] for t in spec.tasks if t in t_index]
        if idx:
            level = combine(task_scores[..., idx], count[..., idx], spec.rule)
        else:
            level = np.full(task_scores.shape[:-1], np.nan)
        columns.append(level[..., None])
    return np.concatenate(columns, axis=-1)


def _multiplicities(n_clusters: int, n_boot: int, rng: np.random.Generator) -> Iterator[FloatArray]:
    """How often each cluster is drawn in each replicate, in chunks of (replicates x clusters)."""
    chunk = max(1, min(n_boot, _CHUNK_CELLS // max(n_clusters, 1)))
    done = 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        draws = rng.integers(0, n_clusters, size=(size, n_clusters))
        flat = (draws + (np.arange(size) * n_clusters)[:, None]).ravel()
        yield np.bincount(flat, minlength=size * n_clusters).reshape(size, n_clusters).astype(np.float64)
        done += size


def _interval(samples: FloatArray, confidence: float) -> list[tuple[float, float] | None]:
    tail = 100.0 * (1.0 - confidence) / 2.0
    result: list[tuple[float, float] | None] = []
    for column in samples.T:
        finite = column[~np.isnan(column)]
        if finite.size == 0:
            result.append(None)
            continue
        low, high = np.percentile(finite, [tail, 100.0 - tail])
        result.append((float(low), float(high)))
    return result


def bootstrap_intervals(
    table: ClusterTable,
    levels: Sequence[LevelSpec],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of every task score and level average, resampling clusters."""
    names = statistic_names(table.tasks, levels)
    if n_boot <= 0 or not table.clusters:
        return dict.fromkeys(names)
    rng = np.random.default_rng(seed)
    chunks = [
        statistics(m @ table.earned, m @ table.possible, m @ table.count, table.tasks, levels)
        for m in _multiplicities(len(table.clusters), n_boot, rng)
    ]
    return dict(zip(names, _interval(np.concatenate(chunks), confidence), strict=True))


class PairedResult(BaseModel):
    """Run A minus run B on one statistic (a task score or a level average), same items."""

    statistic: str
    score_a: float
    score_b: float
    diff: float
    ci95: tuple[float, float] | None
    p_value: float | None
    n_items: int
    n_clusters: int


def _aligned(a: Sequence[ItemScore], b: Sequence[ItemScore]) -> list[tuple[ItemScore, ItemScore]]:
    def by_id(scores: Sequence[ItemScore], label: str) -> dict[str, ItemScore]:
        table: dict[str, ItemScore] = {}
        for score in scores:
            if score.item_id in table:
                raise ValueError(f"run {label} scores item {score.item_id} more than once")
            table[score.item_id] = score
        return table

    left, right = by_id(a, "A"), by_id(b, "B")
    only_a, only_b = sorted(left.keys() - right.keys()), sorted(right.keys() - left.keys())
    if only_a or only_b:
        raise ValueError(
            "a paired comparison needs the same items in both runs: "
            f"{len(only_a)} only in A (e.g. {only_a[:3]}), {len(only_b)} only in B (e.g. {only_b[:3]})"
        )
    pairs = []
    for item_id, first in left.items():
        second = right[item_id]
        if (first.task, first.possible, first.video_id) != (second.task, second.possible, second.video_id):
            raise ValueError(f"item {item_id} differs between runs (task, weight or video)")
        pairs.append((first, second))
    return pairs


def paired_comparison(
    a: Sequence[ItemScore],
    b: Sequence[ItemScore],
    levels: Sequence[LevelSpec],
    *,
    n_boot: int = 2000,
    n_perm: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, PairedResult]:
    """Difference A - B for every task and level: paired cluster-bootstrap CI and a two-sided
    sign-flip permutation p-value (each video's items swap runs together under the null)."""
    pairs = _aligned(a, b)
    tasks = list(dict.fromkeys(s.task for s, _ in pairs))
    table_a = cluster_table([s for s, _ in pairs], tasks)
    table_b = cluster_table([s for _, s in pairs], tasks)
    possible, count = table_a.possible, table_a.count
    names = statistic_names(tasks, levels)

    def stats(earned: FloatArray, weights: FloatArray | None = None) -> FloatArray:
        if weights is None:
            return statistics(earned.sum(0), possible.sum(0), count.sum(0), tasks, levels)
        return statistics(weights @ earned, weights @ possible, weights @ count, tasks, levels)

    observed_a, observed_b = stats(table_a.earned), stats(table_b.earned)
    observed = observed_a - observed_b
    n_clusters = len(table_a.clusters)
    rng = np.random.default_rng(seed)

    boot = [
        stats(table_a.earned, m) - stats(table_b.earned, m) for m in _multiplicities(n_clusters, n_boot, rng)
    ]
    intervals = _interval(np.concatenate(boot), confidence) if boot else [None] * len(names)

    delta = table_a.earned - table_b.earned
    total_a, total_b = table_a.earned.sum(0), table_b.earned.sum(0)
    exceed = np.zeros(len(names))
    valid = np.zeros(len(names))
    done = 0
    chunk = max(1, min(n_perm, _CHUNK_CELLS // max(n_clusters, 1)))
    while done < n_perm:
        size = min(chunk, n_perm - done)
        keep = rng.integers(0, 2, size=(size, n_clusters)).astype(np.float64)  # 1: cluster not swapped
        earned_a = total_b + keep @ delta  # each cluster contributes A's earned if kept, else B's
        earned_b = total_a + total_b - earned_a
        diffs = statistics(earned_a, possible.sum(0), count.sum(0), tasks, levels) - statistics(
            earned_b, possible.sum(0), count.sum(0), tasks, levels
        )
        finite = ~np.isnan(diffs)
        exceed += (finite & (np.abs(diffs) >= np.abs(observed) - 1e-9)).sum(0)
        valid += finite.sum(0)
        done += size

    # Each statistic's own items and videos: a task row counts that task's items, a level row its tasks'.
    per_cluster = [count[:, k] for k in range(len(tasks))]
    t_index = {t: i for i, t in enumerate(tasks)}
    for spec in levels:
        idx = [t_index[t] for t in spec.tasks if t in t_index]
        per_cluster.append(count[:, idx].sum(axis=1) if idx else np.zeros(n_clusters))
    results = {}
    for k, name in enumerate(names):
        if np.isnan(observed[k]):
            continue
        p_value = float((1.0 + exceed[k]) / (1.0 + valid[k])) if n_perm > 0 and valid[k] > 0 else None
        results[name] = PairedResult(
            statistic=name,
            score_a=float(observed_a[k]),
            score_b=float(observed_b[k]),
            diff=float(observed[k]),
            ci95=intervals[k],
            p_value=p_value,
            n_items=int(per_cluster[k].sum()),
            n_clusters=int(np.count_nonzero(per_cluster[k])),
        )
    return results
