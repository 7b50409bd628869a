"""The offline judge's rules, which need no model: normalisation, quantities, contradictions."""

from __future__ import annotations

import pytest

from expvid.scoring.judges.normalise import acronym_of, normalise_answer
from expvid.scoring.judges.offline_blank import contradicts, rule_decision
from expvid.scoring.judges.quantities import quantities, quantities_match


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("CO₂", "CO2"),
        ("cm²", "cm2"),
        ("5 µL", "5 μL"),  # micro sign vs Greek mu
        ("β-actin", "beta actin"),
        ("The Hippocampus", "hippocampus"),
        ("three washes", "3 washes"),
        ("tumour", "tumors"),
        ("haemoglobin", "hemoglobin"),
        ("mice", "mouse"),
        ("larvae", "larva"),
        ("antibodies", "antibody"),
        ("sterilised", "sterilized"),
        ("litre", "liter"),
        ("non-toxic", "nontoxic"),
        ("Ｂ１", "b1"),  # full-width
    ],
)
def test_normalisation_folds_meaningless_differences(a: str, b: str) -> None:
    assert normalise_answer(a) == normalise_answer(b)


@pytest.mark.parametrize(
    ("a", "b"), [("agarose", "sepharose"), ("37", "42"), ("mM", "µM"), ("in vivo", "in vitro")]
)
def test_normalisation_keeps_differences(a: str, b: str) -> None:
    assert normalise_answer(a) != normalise_answer(b)


@pytest.mark.parametrize(
    ("gold", "predicted", "same"),
    [
        ("37 °C", "37°C", True),
        ("37 °C", "37 degrees Celsius", True),
        ("37 °C", "42 °C", False),
        ("1 mL", "1000 µL", True),
        ("0.5 M", "500 mM", True),
        ("0.5 M", "0.5 mM", False),
        ("10 mm", "10 mM", False),  # millimetre is not millimolar
        ("5 min", "5 minutes", True),
        ("5 min", "5 h", False),
        ("2 h", "120 min", True),
        ("1,000 rpm", "1000 rpm", True),
        ("10⁵ cells", "1 × 10^5 cells", True),
        ("10⁵ cells", "10⁶ cells", False),
        ("pH 7.4", "pH 7.4", True),
        ("37", "37 °C", True),  # a bare number matches the same number in the blank's unit
        ("3 washes", "three washes", True),
        ("24 h", "24 h and 48 h", False),
    ],
)
def test_quantities(gold: str, predicted: str, same: bool) -> None:
    assert quantities_match(quantities(gold), quantities(predicted)) is same


def test_acronyms() -> None:
    assert acronym_of("PBS", "phosphate-buffered saline")
    assert acronym_of("ROS", "reactive oxygen species")
    assert not acronym_of("PBS", "Tris-buffered saline")
    assert not acronym_of("pbs", "phosphate-buffered saline")  # must be written as an acronym
    assert not acronym_of("A", "agarose")


@pytest.mark.parametrize(
    ("gold", "predicted"),
    [
        ("increased", "decreased"),
        ("upregulated", "down-regulated"),
        ("significant", "not significant"),
        ("stable", "unstable"),
        ("toxic", "non-toxic"),
        ("soluble", "insoluble"),
        ("in vivo", "in vitro"),
        ("higher", "lower"),
    ],
)
def test_contradictions(gold: str, predicted: str) -> None:
    assert contradicts(gold, predicted)
    assert contradicts(predicted, gold)


@pytest.mark.parametrize(
    ("gold", "predicted"),
    [("nitric oxide", "NO"), ("increased", "an increase"), ("neurons", "neuronal cells")],
)
def test_no_false_contradictions(gold: str, predicted: str) -> None:
    assert not contradicts(gold, predicted)


@pytest.mark.parametrize(
    ("gold", "predicted", "verdict", "rule"),
    [
        ("visible light", "Visible-light", True, "exact"),
        ("knockdown", "knock-down", True, "exact"),
        ("DMSO", "dimethyl sulfoxide", True, "lab_term"),
        ("sodium chloride", "NaCl", True, "lab_term"),
        ("PBS", "phosphate-buffered saline", True, "acronym"),
        ("37 °C", "42 °C", False, "quantity"),
        ("85%", "85 percent", True, "quantity"),
        ("24 h", "1 day", True, "quantity"),
        ("3 washes with PBS", "3 washes with water", None, None),  # numbers agree, meaning decides
        ("increased", "decreased", False, "contradiction"),
        ("agarose beads", "sepharose beads", None, None),
    ],
)
def test_rule_decisions(gold: str, predicted: str, verdict: bool | None, rule: str | None) -> None:
    decision = rule_decision(gold, predicted)
    if verdict is None:
        assert decision is None
    else:
        assert decision is not None and (decision.verdict, decision.rule) == (verdict, rule)
