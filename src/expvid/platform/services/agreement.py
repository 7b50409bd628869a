"""Inter-annotator agreement for two or more raters per item: percent agreement, Cohen's kappa,
Gwet's AC1, Fleiss' kappa and Krippendorff's alpha.

Why several (media-and-review.md): when most candidates are approved, kappa can be low while the
raters agree almost always (the prevalence paradox); Gwet's AC1 stays meaningful there. Cohen's
kappa is defined for two raters only, so with more annotators per item (a campaign setting, 1-5)
the figures that hold for any number are Fleiss' kappa (the multi-rater form of Scott's pi) and
Krippendorff's alpha (any number of ratings per item, nominal categories). A figure is None when it
is undefined (e.g. every rating in one category: the expected agreement is 1 and the formula
divides by zero), rather than a made-up number.

For N items, item i rated n_i >= 2 times, r_ik of them in category k (q categories):
    P_i = sum_k r_ik (r_ik - 1) / (n_i (n_i - 1))        agreeing pairs of ratings of item i
    percent = 100 mean_i P_i                              (two raters: the share of items agreed on)
    Fleiss:  p_k = sum_i r_ik / sum_i n_i,  P_e = sum_k p_k^2,   kappa = (mean P_i - P_e) / (1 - P_e)
    Gwet:    pi_k = mean_i r_ik / n_i,  p_e = sum_k pi_k (1 - pi_k) / (q - 1),   AC1 = (mean P_i - p_e) / (1 - p_e)
    Cohen (exactly two raters per item, in rater order): p_e = sum_k pA_k pB_k,  kappa = (p_o - p_e) / (1 - p_e)
    Krippendorff (nominal): o_ck = sum_i (ordered c-k pairs of item i) / (n_i - 1),  n_c = sum_k o_ck,
             alpha = 1 - (n - 1) sum_{c != k} o_ck / sum_{c != k} n_c n_k,   n = sum_c n_c
Items with fewer than two ratings do not count.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

#: The judgement categories of the platform.
CATEGORIES: tuple[str, ...] = ("approve", "edit", "reject")


@dataclass(frozen=True)
class Agreement:
    #: Items counted (two ratings or more).
    n: int
    percent: float | None
    kappa: float | None
    ac1: float | None
    fleiss_kappa: float | None = None
    krippendorff_alpha: float | None = None
    #: Ratings per item -> items (e.g. {2: 180, 3: 12}).
    raters: dict[int, int] | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "n": self.n,
            "raters_per_item": {str(k): v for k, v in sorted((self.raters or {}).items())},
            "percent_agreement": self.percent,
            "cohen_kappa": self.kappa,
            "gwet_ac1": self.ac1,
            "fleiss_kappa": self.fleiss_kappa,
            "krippendorff_alpha": self.krippendorff_alpha,
        }


def _rated(units: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    return [unit for unit in units if len(unit) >= 2]


def _pair_agreement(unit: Sequence[str]) -> float:
    counts, n = Counter(unit), len(unit)
    return sum(r * (r - 1) for r in counts.values()) / (n * (n - 1))


def percent_agreement(units: Sequence[Sequence[str]]) -> float | None:
    rated = _rated(units)
    if not rated:
        return None
    return 100.0 * sum(_pair_agreement(u) for u in rated) / len(rated)


def cohen_kappa(units: Sequence[Sequence[str]]) -> float | None:
    """Two raters only: None unless every item has exactly two ratings (rater A's first)."""
    if not units or any(len(u) != 2 for u in units):
        return None
    first, second, n = Counter(u[0] for u in units), Counter(u[1] for u in units), len(units)
    observed = sum(u[0] == u[1] for u in units) / n
    expected = sum(first[k] * second[k] for k in set(first) | set(second)) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(units: Sequence[Sequence[str]]) -> float | None:
    rated = _rated(units)
    if not rated:
        return None
    totals: Counter[str] = Counter()
    for unit in rated:
        totals.update(unit)
    ratings = sum(totals.values())
    expected = sum((count / ratings) ** 2 for count in totals.values())
    if expected >= 1.0:
        return None
    observed = sum(_pair_agreement(u) for u in rated) / len(rated)
    return (observed - expected) / (1.0 - expected)


def gwet_ac1(units: Sequence[Sequence[str]], categories: Sequence[str] = CATEGORIES) -> float | None:
    rated = _rated(units)
    if not rated:
        return None
    q = len(set(categories) | {k for u in rated for k in u})
    if q < 2:
        return None
    shares: dict[str, float] = defaultdict(float)
    for unit in rated:
        for category, count in Counter(unit).items():
            shares[category] += count / len(unit)
    expected = sum((s / len(rated)) * (1 - s / len(rated)) for s in shares.values()) / (q - 1)
    if expected >= 1.0:  # pragma: no cover - cannot happen for q >= 2
        return None
    observed = sum(_pair_agreement(u) for u in rated) / len(rated)
    return (observed - expected) / (1.0 - expected)


def krippendorff_alpha(units: Sequence[Sequence[str]]) -> float | None:
    """Nominal alpha over the items with two or more ratings (any number per item)."""
    rated = _rated(units)
    coincidences: dict[tuple[str, str], float] = defaultdict(float)
    for unit in rated:
        counts, m = Counter(unit), len(unit)
        for c, rc in counts.items():
            for k, rk in counts.items():
                pairs = rc * (rc - 1) if c == k else rc * rk
                coincidences[(c, k)] += pairs / (m - 1)
    marginals: dict[str, float] = defaultdict(float)
    for (c, _k), value in coincidences.items():
        marginals[c] += value
    n = sum(marginals.values())
    disagree_expected = sum(marginals[c] * marginals[k] for c in marginals for k in marginals if c != k)
    if n <= 1 or disagree_expected == 0:
        return None
    disagree_observed = sum(value for (c, k), value in coincidences.items() if c != k)
    return 1.0 - (n - 1) * disagree_observed / disagree_expected


def agreement(units: Sequence[Sequence[str]], categories: Sequence[str] = CATEGORIES) -> Agreement:
    """All the figures over `units` (each the categories one item was given, by its raters)."""
    rated = _rated(units)
    return Agreement(
        n=len(rated),
        percent=percent_agreement(rated),
        kappa=cohen_kappa(rated),
        ac1=gwet_ac1(rated, categories),
        fleiss_kappa=fleiss_kappa(rated),
        krippendorff_alpha=krippendorff_alpha(rated),
        raters=dict(Counter(len(u) for u in rated)),
    )
