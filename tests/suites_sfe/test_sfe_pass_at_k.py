"""pass@k from n samples per item: the unbiased estimator, and its graded (best-of-k) form."""

from __future__ import annotations

import itertools
from math import comb

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.scoring.pass_at_k import expected_best_of_k, pass_at_k, pass_at_k_curve


def test_unbiased_estimator_values() -> None:
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - comb(3, 2) / comb(5, 2))  # 0.7
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 4, 2) == 1.0 and pass_at_k(4, 1, 1) == 0.25


def test_expected_best_of_k_is_the_mean_over_all_k_subsets() -> None:
    scores = [0.0, 0.5, 1.0, 0.2]
    for k in range(1, 5):
        subsets = list(itertools.combinations(scores, k))
        assert expected_best_of_k(scores, k) == pytest.approx(sum(max(s) for s in subsets) / len(subsets))


@given(st.lists(st.booleans(), min_size=1, max_size=12), st.data())
def test_graded_form_equals_pass_at_k_for_binary_scores(correct, data) -> None:
    k = data.draw(st.integers(min_value=1, max_value=len(correct)))
    assert expected_best_of_k([float(c) for c in correct], k) == pytest.approx(
        pass_at_k(len(correct), sum(correct), k)
    )


def test_curve_over_items_and_unequal_samples_are_refused() -> None:
    curve = pass_at_k_curve({"a": [1.0, 0.0], "b": [0.0, 0.0]})
    assert curve == {1: pytest.approx(0.25), 2: pytest.approx(0.5)}
    with pytest.raises(ValueError, match="different numbers of samples"):
        pass_at_k_curve({"a": [1.0], "b": [0.0, 1.0]})
