"""The text-only audit on generated releases: planted shortcuts are found, clean releases are not flagged."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from audit_releases import PLANTED, clean_release, planted_longest, planted_release

from expvid.audit import AuditOptions, audit_items, default_embedder, near_duplicate_pairs
from expvid.audit.duplicates import EmbeddingTable

EXPECTED = {  # planted group -> what must flag its items
    "longest": "longest option",
    "middle": ("middle rank", "nearest the mean", "nearest the median"),
    "roundest": "roundest value",
    "twins": "near-duplicate options",
}


@pytest.fixture(scope="module")
def embeddings() -> EmbeddingTable:
    return EmbeddingTable(default_embedder())


def test_planted_shortcuts_are_flagged_in_90_percent_of_their_items(embeddings: EmbeddingTable) -> None:
    items = planted_release(per_group=40, clean=160, seed=7)
    report = audit_items(items, options=AuditOptions(embeddings=embeddings.embedder))
    flagged = {(s.name, s.task) for s in report.flagged_solvers}
    assert ("longest option", "longest") in flagged
    assert ("roundest value", "roundest") in flagged
    assert {("middle rank", "middle"), ("nearest the mean", "middle")} <= flagged
    for group, expected in EXPECTED.items():
        wanted = (expected,) if isinstance(expected, str) else expected
        entries = [item for item in report.items if item.task == group]
        hit = sum(any(flag in item.flags for flag in wanted) for item in entries)
        assert len(entries) == 40 and hit >= 0.9 * len(entries), (group, hit)
    assert set(PLANTED) == set(EXPECTED)
    # no solver is flagged on the clean tasks of the same release
    assert not [s for s in report.flagged_solvers if s.task in ("names", "amounts")]


def test_a_clean_release_of_300_items_flags_no_solver_and_few_items(embeddings: EmbeddingTable) -> None:
    items = clean_release(300, seed=11)
    report = audit_items(items, options=AuditOptions(embeddings=embeddings.embedder))
    assert len(report.solvers) >= 10 and all(s.n > 0 for s in report.solvers)
    assert {s.name for s in report.solvers} >= {
        "longest option",
        "roundest value",
        "learned text-only model",
        "letter prior",
    }
    assert report.flagged_solvers == []
    assert len(report.flagged_items) <= 0.05 * len(items), Counter(
        f for i in report.flagged_items for f in i.flags
    )


def test_holm_keeps_clean_releases_unflagged_across_seeds() -> None:
    """Family-wise error: over 40 clean releases of 300 items, a solver is flagged in at most 4 (10%;
    Holm at 5% and a conservative test expect fewer). A planted bias as weak as "the correct option
    is the only long one in one item of six" is flagged in most releases of that size."""
    flagged = 0
    for seed in range(40):
        report = audit_items(clean_release(300, seed=1000 + seed), options=AuditOptions(embeddings=False))
        flagged += bool(report.flagged_solvers)
    assert flagged <= 4
    weak = 0
    for seed in range(10):  # the same test is not blind: one item in six with a long correct option
        rng = random.Random(seed)
        items = clean_release(300, seed=2000 + seed)
        items += [planted_longest(300 + i, rng, task="names") for i in range(30)]
        report = audit_items(items, options=AuditOptions(embeddings=False, learned=False))
        weak += any(s.name == "longest option" and s.task == "names" for s in report.flagged_solvers)
    assert weak >= 8


@pytest.mark.parametrize(
    ("options", "pairs"),
    [
        ({"A": "98%", "B": "98 %", "C": "75%"}, [("A", "B", "equal value")]),
        ({"A": "3.86%", "B": "-3.86%", "C": "35mm f1.8", "D": "35mm f8"}, []),
        ({"A": "s' = s/sqrt{2}", "B": "s' = s*sqrt{2}"}, []),
        ({"A": "answer.", "B": "answer", "C": "other"}, [("A", "B", "normal form")]),
        (
            {"A": "0.5", "B": ".5", "C": "1/2", "D": "0.25"},
            [("A", "B", "equal value"), ("A", "C", "equal value"), ("B", "C", "equal value")],
        ),
        ({"A": "1 mL", "B": "1000 µL", "C": "1 L"}, [("A", "B", "equal value")]),
        ({"A": "the beaker", "B": "Beakers", "C": "flask"}, [("A", "B", "normal form")]),
        (
            {
                "A": "You should cut the tomato into two pieces.",
                "B": "You need to cut tomato into two pieces",
                "C": "Slice the onion",
            },
            [("A", "B", "embedding")],
        ),
        (  # a real pair of ProMQA answers to one question
            {
                "A": "No, you should have microwaved it for 3 minutes instead of 30 seconds.",
                "B": "No, you should have microwaved it for 3 minutes instead of just 30 seconds.",
            },
            [("A", "B", "embedding")],
        ),
        ({"A": "Flow faster", "B": "Flow slower"}, []),
        ({"A": "Z = jωL + (ωM)^2/R", "B": "Z = jωL - (ωM)^2/R"}, []),
        ({"A": "37 °C", "B": "42 °C", "C": "4 °C"}, []),
        ({"A": "Heat flows from above to below", "B": "Heat flows from below to above"}, []),
        ({"A": "The salt is soluble", "B": "The salt is not soluble"}, []),
        ({"A": "Peel the cucumber", "B": "Peel the cucumber and chop it"}, []),
    ],
)
def test_near_duplicate_pairs(
    options: dict[str, str], pairs: list[tuple[str, str, str]], embeddings: EmbeddingTable
) -> None:
    found = near_duplicate_pairs(options, embeddings=embeddings)
    assert [(p.first, p.second, p.how) for p in found] == pairs
