"""Paired comparison of two runs on the items both scored (same dataset, same item ids)."""

from __future__ import annotations

from pathlib import Path

from expvid.run.rundir import RunDir
from expvid.run.scoring_phase import read_item_scores, read_scores
from expvid.schema import DataError
from expvid.scoring import PairedResult, paired_comparison
from expvid.suites.registry import get_suite


def compare_runs(run_a: Path, run_b: Path, *, n_boot: int = 2000, seed: int = 0) -> dict[str, PairedResult]:
    dir_a, dir_b = RunDir(run_a), RunDir(run_b)
    scores_a, scores_b = read_scores(dir_a), read_scores(dir_b)
    if scores_a.run.suite != scores_b.run.suite:
        raise DataError(f"{run_a} and {run_b} evaluate different suites")
    if scores_a.run.dataset_fingerprint != scores_b.run.dataset_fingerprint:
        raise DataError(f"{run_a} and {run_b} were scored on different datasets (fingerprints differ)")
    items_a, items_b = read_item_scores(dir_a), read_item_scores(dir_b)
    common = {s.item_id for s in items_a} & {s.item_id for s in items_b}
    if not common:
        raise DataError(f"{run_a} and {run_b} have no scored item in common")
    suite = get_suite(scores_a.run.suite)
    return paired_comparison(
        [s for s in items_a if s.item_id in common],
        [s for s in items_b if s.item_id in common],
        suite.levels,
        n_boot=n_boot,
        seed=seed,
    )


def format_comparison(results: dict[str, PairedResult]) -> str:
    lines = [
        "| statistic | A | B | A - B | 95% CI | p | items | videos |",
        "|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for name, r in results.items():
        ci = "–" if r.ci95 is None else f"[{r.ci95[0]:+.1f}, {r.ci95[1]:+.1f}]"
        p = "–" if r.p_value is None else f"{r.p_value:.3f}"
        lines.append(
            f"| {name} | {r.score_a:.1f} | {r.score_b:.1f} | {r.diff:+.1f} | {ci} | {p} | {r.n_items} | {r.n_clusters} |"
        )
    return "\n".join(lines) + "\n"
