"""Agreement statistics against hand-computed values and their defining properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.platform.services.agreement import CATEGORIES, agreement, cohen_kappa, gwet_ac1, percent_agreement


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


def _units(table: list[list[int]], categories: str = "12345") -> list[list[str]]:
    """Items as lists of ratings, from a table of counts per category (one row per item)."""
    return [[c for c, n in zip(categories, row, strict=True) for _ in range(n)] for row in table]


def test_fleiss_kappa_on_the_published_example() -> None:
    # Fleiss (1971) as tabulated on Wikipedia: 10 subjects, 14 raters each, 5 categories: kappa 0.210.
    table = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
             [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]  # fmt: skip
    figures = agreement(_units(table), tuple("12345"))
    assert figures.fleiss_kappa == pytest.approx(0.210, abs=5e-4)
    assert figures.percent == pytest.approx(37.8, abs=0.05)  # P-bar 0.378
    assert figures.kappa is None  # Cohen's is for two raters only
    assert figures.raters == {14: 10}


def test_krippendorff_alpha_on_the_published_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units,
    # missing values; nominal alpha 0.743. Unit 12 has one value only and does not count.
    observers = ["1 2 3 3 2 1 4 1 2 . . .", "1 2 3 3 2 2 4 1 2 5 . 3",
                 ". 3 3 3 2 3 4 2 2 5 1 .", "1 2 3 3 2 4 4 1 2 5 1 ."]  # fmt: skip
    columns = list(zip(*(row.split() for row in observers), strict=True))
    units = [[v for v in column if v != "."] for column in columns]
    figures = agreement(units, tuple("12345"))
    assert figures.krippendorff_alpha == pytest.approx(0.743, abs=5e-4)
    assert figures.n == 11 and figures.raters == {4: 8, 3: 2, 2: 1}


@given(st.lists(st.tuples(verdicts, verdicts), min_size=1, max_size=60))
def test_multi_rater_figures_agree_with_two_rater_ones(pairs: list[tuple[str, str]]) -> None:
    """With two raters per item: Fleiss' kappa is Scott's pi, and Krippendorff's alpha is pi
    corrected for the sample, alpha = pi + (1 - pi) / 2n (Krippendorff 2011)."""
    figures = agreement(pairs)
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    shares = [sum((a == k) + (b == k) for a, b in pairs) / (2 * n) for k in CATEGORIES]
    expected = sum(p * p for p in shares)
    if expected < 1:
        scott = (observed - expected) / (1 - expected)
        assert figures.fleiss_kappa == pytest.approx(scott)
        assert figures.krippendorff_alpha == pytest.approx(scott + (1 - scott) / (2 * n))
    else:
        assert figures.fleiss_kappa is None and figures.krippendorff_alpha is None


def test_three_annotators_by_hand() -> None:
    units = [["approve"] * 3, ["approve", "approve", "edit"], ["reject", "edit", "approve"], ["edit"] * 3]
    figures = agreement(units)
    # P_i: 1, 1/3, 0, 1 -> mean 7/12; p_approve = 6/12, p_edit = 5/12, p_reject = 1/12.
    expected = (6 / 12) ** 2 + (5 / 12) ** 2 + (1 / 12) ** 2
    assert figures.percent == pytest.approx(100 * 7 / 12)
    assert figures.fleiss_kappa == pytest.approx((7 / 12 - expected) / (1 - expected))
    assert figures.kappa is None and figures.raters == {3: 4}
