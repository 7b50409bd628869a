"""Fixtures for SFE: the sample set (both languages) and one BERTScore model per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from expvid.schema.dataset import Dataset
from expvid.scoring.bertscore import BertScorer
from expvid.suites.sfe import load_sfe, make_sfe_sample


@pytest.fixture(scope="session")
def sfe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sfe") / "sample"
    make_sfe_sample(root)
    return root


@pytest.fixture(scope="session")
def sfe_dataset(sfe_dir: Path) -> Dataset:
    return load_sfe(sfe_dir, languages=("en", "zh"))


@pytest.fixture(scope="session")
def minilm_scorer() -> BertScorer:
    scorer = BertScorer("minilm")
    scorer.load()
    return scorer
