"""Is a solver better than chance? Exact binomial intervals and Holm's correction over many solvers.

A release is tested with dozens of solvers on each of its tasks; at the 5% level one test in twenty
"beats chance" by luck alone, so a solver is flagged only when its accuracy beats chance after
Holm's step-down correction over every (solver, task) test of the audit: the family-wise error
stays at or below `ALPHA` however many solvers run.

Hits may be fractional: a solver that ties k options gets 1/k of an item when the correct one is
among them (its expected accuracy under a uniform guess among the tied). Under the null hypothesis
(the correct option is placed independently of what the solver looks at) such a sum has the mean
of a binomial count with the same chance and a smaller variance, and items of one task can have
different option counts (a Poisson-binomial sum, again with a smaller variance than the binomial
at the mean chance): the exact binomial test at the mean chance is conservative for both. The
binomial tail and the Clopper-Pearson bounds are read from the beta distribution, which extends
them continuously to fractional hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import beta

#: Family-wise error rate of the audit's flags.
ALPHA = 0.05
#: Confidence of the per-solver interval shown in reports and `audit.json`.
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


def clopper_pearson(hits: float, n: int, confidence: float = CONFIDENCE) -> Interval:
    """Two-sided exact (Clopper-Pearson) interval of a proportion; (0, 1) when n is 0."""
    if n <= 0:
        return Interval(0.0, 1.0)
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if hits <= 0 else float(beta.ppf(tail, hits, n - hits + 1))
    high = 1.0 if hits >= n else float(beta.ppf(1.0 - tail, hits + 1, n - hits))
    return Interval(low, high)


def lower_bound(hits: float, n: int, alpha: float) -> float:
    """One-sided exact lower confidence bound at level 1 - alpha (0 when nothing was hit)."""
    if n <= 0 or hits <= 0:
        return 0.0
    return float(beta.ppf(alpha, hits, n - hits + 1))


def p_above_chance(hits: float, n: int, chance: float) -> float:
    """One-sided exact binomial p-value of `hits` of `n` against the chance level (P[X >= hits])."""
    if n <= 0 or hits <= 0:
        return 1.0
    if chance <= 0.0:
        return 0.0
    if chance >= 1.0:
        return 1.0
    return float(beta.cdf(chance, hits, n - hits + 1))


def holm(p_values: Sequence[float], alpha: float = ALPHA) -> tuple[list[float], list[float]]:
    """Holm's step-down procedure: (adjusted p-values, each test's own level alpha / (m - rank)).

    A test is rejected when its adjusted p-value is below `alpha`: the smallest p-value is compared
    with alpha / m, the next with alpha / (m - 1), and so on until one fails."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    levels = [alpha] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
        levels[index] = alpha / (m - rank)
    return adjusted, levels
