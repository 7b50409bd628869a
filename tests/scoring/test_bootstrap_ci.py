"""Cluster bootstrap intervals and the paired comparison of two runs."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from expvid.schema import ExtractionStatus, ItemScore
from expvid.scoring.aggregate import build_report
from expvid.scoring.bootstrap import bootstrap_intervals, cluster_table, paired_comparison
from expvid.scoring.levels import EXPVID_LEVELS


def _scores(
    outcomes: Mapping[str, Sequence[float]], task: str = "tools", prefix: str = ""
) -> list[ItemScore]:
    """`outcomes` maps a video id to its items' earned values."""
    return [
        ItemScore(
            item_id=f"{prefix}{task}/{video}/{i}",
            task=task,
            status=ExtractionStatus.OK,
            earned=value,
            video_id=video,
        )
        for video, values in outcomes.items()
        for i, value in enumerate(values)
    ]


def _random_run(rng: np.random.Generator, n_videos: int, per_video: int, p: float) -> dict[str, list[float]]:
    return {f"v{v}": [float(x) for x in rng.random(per_video) < p] for v in range(n_videos)}


def test_vectorised_bootstrap_equals_a_plain_loop() -> None:
    rng = np.random.default_rng(7)
    scores = _scores(_random_run(rng, 12, 3, 0.6)) + _scores(_random_run(rng, 12, 2, 0.3), task="materials")
    table = cluster_table(scores, ["tools", "materials"])
    n_boot, seed = 300, 11
    fast = bootstrap_intervals(table, EXPVID_LEVELS, n_boot=n_boot, seed=seed)

    draws = np.random.default_rng(seed).integers(0, len(table.clusters), size=(n_boot, len(table.clusters)))
    by_cluster: dict[str, list[ItemScore]] = {}
    for score in scores:
        by_cluster.setdefault(f"video:{score.video_id}", []).append(score)
    tools, materials, level = [], [], []
    for row in draws:
        picked = [item for c in row for item in by_cluster[table.clusters[c]]]
        t = [x.earned for x in picked if x.task == "tools"]
        m = [x.earned for x in picked if x.task == "materials"]
        tools.append(100 * np.mean(t))
        materials.append(100 * np.mean(m))
        level.append(100 * np.mean(t + m))  # L1 is item-weighted: pooled over both tasks
    for name, samples in (("tools", tools), ("materials", materials), ("L1", level)):
        assert fast[name] == pytest.approx(tuple(np.percentile(samples, [2.5, 97.5])))


def test_intervals_are_deterministic_and_cover_the_estimate() -> None:
    scores = _scores(_random_run(np.random.default_rng(1), 200, 4, 0.6))
    first = build_report(scores, n_boot=500, seed=5).tasks["tools"]
    again = build_report(scores, n_boot=500, seed=5).tasks["tools"]
    assert first.ci95 == again.ci95
    assert first.ci95 is not None
    low, high = first.ci95
    assert low < first.score < high
    assert build_report(scores, n_boot=500, seed=6).tasks["tools"].ci95 != first.ci95


def test_clustered_videos_widen_the_interval() -> None:
    # Every item of a video shares its outcome: the effective sample is the 60 videos, not 300 items.
    rng = np.random.default_rng(2)
    outcomes = {f"v{v}": [float(rng.random() < 0.5)] * 5 for v in range(60)}
    clustered = _scores(outcomes)
    independent = [s.model_copy(update={"video_id": None}) for s in clustered]
    width = lambda ci: ci[1] - ci[0]  # noqa: E731
    by_video = build_report(clustered, n_boot=1000).tasks["tools"].ci95
    by_item = build_report(independent, n_boot=1000).tasks["tools"].ci95
    assert by_video is not None and by_item is not None
    assert width(by_video) > 1.8 * width(by_item)
    expected = 2 * 1.96 * 100 * np.sqrt(0.25 / 60)  # binomial interval over 60 videos
    assert width(by_video) == pytest.approx(expected, rel=0.25)


def test_level_average_gets_an_interval() -> None:
    rng = np.random.default_rng(3)
    scores = _scores(_random_run(rng, 40, 2, 0.7), "sequence_ordering") + _scores(
        _random_run(rng, 40, 2, 0.2), "step_prediction"
    )
    level = build_report(scores, n_boot=400).levels["L2"]
    assert level.ci95 is not None and level.ci95[0] < level.score < level.ci95[1]


def test_paired_identical_runs() -> None:
    run = _scores(_random_run(np.random.default_rng(4), 30, 3, 0.5))
    result = paired_comparison(run, run, EXPVID_LEVELS, n_boot=300, n_perm=300)["tools"]
    assert result.diff == 0.0
    assert result.ci95 == (0.0, 0.0)
    assert result.p_value == 1.0
    assert (result.n_items, result.n_clusters) == (90, 30)


def test_paired_clear_difference() -> None:
    rng = np.random.default_rng(5)
    a = _scores(_random_run(rng, 60, 3, 0.8))
    b = _scores(_random_run(rng, 60, 3, 0.4))
    result = paired_comparison(a, b, EXPVID_LEVELS, n_boot=1000, n_perm=1000, seed=1)
    tools = result["tools"]
    assert tools.diff == pytest.approx(tools.score_a - tools.score_b)
    assert tools.ci95 is not None and tools.ci95[0] > 0
    assert tools.p_value is not None and tools.p_value < 0.01
    assert "L1" in result and "L2" not in result


def test_permutation_p_value_matches_exact_enumeration() -> None:
    # Six videos: all 2^6 sign flips can be enumerated, giving the exact permutation p-value.
    a = _scores({f"v{i}": v for i, v in enumerate([[1, 1], [1, 0], [1, 1], [0, 1], [1, 1], [1, 0]])})
    b = _scores({f"v{i}": v for i, v in enumerate([[0, 1], [0, 0], [1, 0], [0, 1], [0, 0], [1, 0]])})
    ea = np.array([[x.earned for x in a if x.video_id == f"v{i}"] for i in range(6)]).sum(1)
    eb = np.array([[x.earned for x in b if x.video_id == f"v{i}"] for i in range(6)]).sum(1)
    observed = abs(ea.sum() - eb.sum())
    flips = [
        abs(sum((ea[i] - eb[i]) * (1 if keep else -1) for i, keep in enumerate(signs)))
        for signs in itertools.product([True, False], repeat=6)
    ]
    exact = np.mean([f >= observed - 1e-9 for f in flips])
    estimated = paired_comparison(a, b, EXPVID_LEVELS, n_boot=0, n_perm=20000, seed=2)["tools"].p_value
    assert estimated == pytest.approx(exact, abs=0.015)


def test_paired_needs_the_same_items() -> None:
    a = _scores({"v1": [1, 0]})
    b = _scores({"v1": [1]})
    with pytest.raises(ValueError, match="1 only in A"):
        paired_comparison(a, b, EXPVID_LEVELS)
    with pytest.raises(ValueError, match="more than once"):
        paired_comparison(a + a[:1], a, EXPVID_LEVELS)
