"""pass@k from n samples per item, without bias (Chen et al. 2021; Kulal et al. 2019).

For an item with n samples of which c are correct, the chance that at least one of k samples
drawn without replacement is correct is 1 - C(n-c, k) / C(n, k). Averaging that over items is
unbiased; the naive "any of the first k correct" is not (it depends on sample order and wastes
the other n-k samples).

Where scores are graded (a 0-10 judge, IoU), pass@k "selects the highest quality answer" among
k: the same estimator generalises to the expected best score of k samples drawn without
replacement, sum_i s_(i) * C(i-1, k-1) / C(n, k) over the sorted scores s_(1) <= ... <= s_(n).
For 0/1 scores the two formulas agree exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples (of n, c correct) is correct."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def expected_best_of_k(scores: Sequence[float], k: int) -> float:
    """Expected maximum of k of the item's n sample scores drawn without replacement."""
    n = len(scores)
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    ordered = sorted(float(s) for s in scores)
    total = comb(n, k)
    return sum(score * comb(i, k - 1) for i, score in enumerate(ordered)) / total


def pass_at_k_curve(
    per_item: Mapping[str, Sequence[float]], ks: Sequence[int] | None = None
) -> dict[int, float]:
    """Mean expected best-of-k over items, for each k (default 1..n); scores in 0..1 give 0..1.

    Every item must have the same number of samples: a mix would weigh items unequally.
    """
    if not per_item:
        return {}
    sizes = {len(scores) for scores in per_item.values()}
    if len(sizes) != 1:
        raise ValueError(f"items have different numbers of samples: {sorted(sizes)}")
    n = sizes.pop()
    wanted = list(range(1, n + 1)) if ks is None else [k for k in ks if 1 <= k <= n]
    return {
        k: sum(expected_best_of_k(scores, k) for scores in per_item.values()) / len(per_item) for k in wanted
    }
