"""BERTScore F1 with a configurable model; the offline MiniLM default is named as such."""

from __future__ import annotations

import pytest

from expvid.scoring.bertscore import BertScoreError, BertScorer, official_available, resolve_model


def test_identical_texts_score_one_and_unrelated_ones_much_less(minilm_scorer) -> None:
    same = minilm_scorer.score(
        "Benzene is a ring of six carbon atoms.", "Benzene is a ring of six carbon atoms."
    )
    close = minilm_scorer.score("A ring of six carbons: benzene.", "Benzene is a ring of six carbon atoms.")
    far = minilm_scorer.score("The galaxy is elliptical.", "Benzene is a ring of six carbon atoms.")
    assert same.f1 == pytest.approx(1.0, abs=1e-5)
    assert far.f1 < close.f1 < same.f1
    assert minilm_scorer.score("", "Benzene").f1 == 0.0  # no tokens: 0, not an error


def test_f1_does_not_depend_on_which_side_is_the_reference(minilm_scorer) -> None:
    # the official scorer passes (gold, prediction) swapped: precision and recall swap, F1 stays
    a = minilm_scorer.score(
        "semiconductor, band gap 1.1 eV", "A semiconductor with a band gap of about 1.1 eV."
    )
    b = minilm_scorer.score(
        "A semiconductor with a band gap of about 1.1 eV.", "semiconductor, band gap 1.1 eV"
    )
    assert (a.precision, a.recall) == pytest.approx((b.recall, b.precision), abs=1e-5)
    assert a.f1 == pytest.approx(b.f1, abs=1e-5)


def test_reports_say_which_model(minilm_scorer) -> None:
    described = minilm_scorer.describe()
    assert described["which"] == "minilm" and described["comparable_to_paper"] is False
    assert described["layer"] == 6 and "all-MiniLM-L6-v2" in described["model"]
    assert described["idf"] is False and described["rescale_with_baseline"] is False


def test_model_specs() -> None:
    official = resolve_model("official")
    assert (official.model, official.layer, official.official) == ("bert-base-multilingual-cased", 9, True)
    custom = resolve_model("/models/my-bert:7")
    assert (custom.model, custom.layer, custom.label) == ("/models/my-bert", 7, "custom")
    with pytest.raises(BertScoreError, match="PATH_OR_NAME:LAYER"):
        resolve_model("bert")
    assert resolve_model("auto").label == ("official" if official_available() else "minilm")


def test_an_uncached_official_model_fails_clearly_instead_of_downloading() -> None:
    if official_available():
        pytest.skip("bert-base-multilingual-cased is cached here")
    with pytest.raises(BertScoreError, match="local Hugging Face cache"):
        BertScorer("official").score("a", "b")


def test_a_layer_the_model_does_not_have(minilm_scorer) -> None:
    deep = BertScorer(resolve_model(f"{minilm_scorer.spec.model}:12"))
    with pytest.raises(BertScoreError, match="has 6 layers"):
        deep.score("a", "b")
