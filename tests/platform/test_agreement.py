"""Agreement statistics against hand-computed values and their defining properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.platform.services.agreement import agreement, cohen_kappa, gwet_ac1, percent_agreement


def _pairs(counts: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, n in counts.items() for _ in range(n)]


def test_textbook_two_by_two_table() -> None:
    # 50 items: both yes 20, A yes/B no 5, A no/B yes 10, both no 15 (Cohen's kappa, Wikipedia example).
    pairs = _pairs({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    assert percent_agreement(pairs) == pytest.approx(70.0)
    assert cohen_kappa(pairs) == pytest.approx(0.4)
    # Gwet: pi_yes = (0.5 + 0.6) / 2 = 0.55, p_e = 2 * 0.55 * 0.45 / (2 - 1) = 0.495.
    assert gwet_ac1(pairs, ("yes", "no")) == pytest.approx((0.7 - 0.495) / (1 - 0.495))


def test_prevalence_paradox_kappa_low_ac1_high() -> None:
    # 90 % of candidates approved by both: agreement is high, kappa is not (media-and-review.md).
    pairs = _pairs({("approve", "approve"): 90, ("approve", "edit"): 5, ("edit", "approve"): 5})
    figures = agreement(pairs, ("approve", "edit"))
    assert figures.percent == pytest.approx(90.0)
    assert figures.kappa == pytest.approx((0.9 - 0.905) / (1 - 0.905))
    assert figures.kappa is not None and figures.kappa < 0
    assert figures.ac1 == pytest.approx((0.9 - 0.095) / (1 - 0.095))
    assert figures.ac1 is not None and figures.ac1 > 0.85


def test_one_category_throughout_kappa_undefined_ac1_defined() -> None:
    figures = agreement([("approve", "approve")] * 12)
    assert figures.percent == 100.0
    assert figures.kappa is None  # expected agreement 1: kappa is 0/0, reported as undefined
    assert figures.ac1 == pytest.approx(1.0)


def test_three_categories_by_hand() -> None:
    pairs = _pairs(
        {
            ("approve", "approve"): 4,
            ("edit", "edit"): 2,
            ("reject", "reject"): 1,
            ("approve", "edit"): 2,
            ("edit", "reject"): 1,
        }
    )
    # n=10, p_o=0.7; A: approve .6 edit .3 reject .1; B: approve .4 edit .4 reject .2
    expected_pe = 0.6 * 0.4 + 0.3 * 0.4 + 0.1 * 0.2
    assert cohen_kappa(pairs) == pytest.approx((0.7 - expected_pe) / (1 - expected_pe))
    pis = [(0.6 + 0.4) / 2, (0.3 + 0.4) / 2, (0.1 + 0.2) / 2]
    ac1_pe = sum(p * (1 - p) for p in pis) / 2
    assert gwet_ac1(pairs) == pytest.approx((0.7 - ac1_pe) / (1 - ac1_pe))


def test_empty_input_gives_no_numbers() -> None:
    figures = agreement([])
    assert (figures.n, figures.percent, figures.kappa, figures.ac1) == (0, None, None, None)


verdicts = st.sampled_from(["approve", "edit", "reject"])


@given(st.lists(st.tuples(verdicts, verdicts), min_size=1, max_size=60))
def test_symmetric_and_bounded(pairs: list[tuple[str, str]]) -> None:
    swapped = [(b, a) for a, b in pairs]
    a, b = agreement(pairs), agreement(swapped)
    assert a.percent == pytest.approx(b.percent)
    assert (a.kappa is None) == (b.kappa is None)
    if a.kappa is not None and b.kappa is not None:
        assert a.kappa == pytest.approx(b.kappa)
        assert a.kappa <= 1.0 + 1e-9
    assert a.ac1 is not None and b.ac1 is not None
    assert a.ac1 == pytest.approx(b.ac1)
    assert a.ac1 <= 1.0 + 1e-9


@given(st.lists(verdicts, min_size=2, max_size=40).filter(lambda v: len(set(v)) > 1))
def test_perfect_agreement_is_one(labels: list[str]) -> None:
    figures = agreement([(v, v) for v in labels])
    assert figures.kappa == pytest.approx(1.0)
    assert figures.ac1 == pytest.approx(1.0)
