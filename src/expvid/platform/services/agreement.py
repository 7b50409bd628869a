"""Inter-annotator agreement for two raters: percent agreement, Cohen's kappa, Gwet's AC1.

Why all three (media-and-review.md): when most candidates are approved, kappa can be low while the
raters agree almost always (the prevalence paradox); Gwet's AC1 stays meaningful there. Kappa is
reported as None when it is undefined (both raters used one and the same category for every item:
expected agreement is 1 and the formula divides by zero), rather than as a made-up number.

Formulas, for N items rated by raters A and B over categories K (q = |K|):
    p_o = fraction of items with the same category
    Cohen:  p_e = sum_k pA_k * pB_k,                          kappa = (p_o - p_e) / (1 - p_e)
    Gwet:   pi_k = (pA_k + pB_k) / 2, p_e = sum_k pi_k (1 - pi_k) / (q - 1),   AC1 = (p_o - p_e) / (1 - p_e)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

#: The judgement categories of the platform.
CATEGORIES: tuple[str, ...] = ("approve", "edit", "reject")


@dataclass(frozen=True)
class Agreement:
    n: int
    percent: float | None
    kappa: float | None
    ac1: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        return {
            "n": self.n,
            "percent_agreement": self.percent,
            "cohen_kappa": self.kappa,
            "gwet_ac1": self.ac1,
        }


def percent_agreement(pairs: Sequence[tuple[str, str]]) -> float | None:
    if not pairs:
        return None
    return 100.0 * sum(a == b for a, b in pairs) / len(pairs)


def _marginals(pairs: Sequence[tuple[str, str]]) -> tuple[Counter[str], Counter[str], int]:
    return Counter(a for a, _ in pairs), Counter(b for _, b in pairs), len(pairs)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    if not pairs:
        return None
    first, second, n = _marginals(pairs)
    observed = sum(a == b for a, b in pairs) / n
    expected = sum(first[k] * second[k] for k in set(first) | set(second)) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def gwet_ac1(pairs: Sequence[tuple[str, str]], categories: Sequence[str] = CATEGORIES) -> float | None:
    if not pairs:
        return None
    q = len(set(categories) | {a for a, _ in pairs} | {b for _, b in pairs})
    if q < 2:
        return None
    first, second, n = _marginals(pairs)
    observed = sum(a == b for a, b in pairs) / n
    pis = [(first[k] + second[k]) / (2 * n) for k in set(first) | set(second)]
    expected = sum(p * (1 - p) for p in pis) / (q - 1)
    if expected >= 1.0:  # pragma: no cover - cannot happen for q >= 2
        return None
    return (observed - expected) / (1.0 - expected)


def agreement(pairs: Sequence[tuple[str, str]], categories: Sequence[str] = CATEGORIES) -> Agreement:
    return Agreement(
        n=len(pairs),
        percent=percent_agreement(pairs),
        kappa=cohen_kappa(pairs),
        ac1=gwet_ac1(pairs, categories),
    )
