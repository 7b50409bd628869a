"""Details found against SFE's released code: disciplines by task id, the official Open-BERTScore
aggregation (an unparseable answer counts 0), and what the box parser reads in raw mode."""

from __future__ import annotations

import json
import shutil

import pytest

from expvid.scoring import Extraction
from expvid.suites.sfe import SFESuite


def test_disciplines_come_from_the_task_id_not_the_spelling_of_the_field(sfe_dir, tmp_path) -> None:
    root = tmp_path / "sfe"
    shutil.copytree(sfe_dir, root)
    path = root / "20250515-en" / "sfe.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    spellings = {
        "A": "astrophysics",
        "C": "Chemistry ",
        "E": "Earth Science",
        "L": "life-sciences",
        "M": "Materials science",
    }
    for record in records:
        record["field"] = spellings[record["id"][0]]
    records[0] = {**records[0], "id": "X001/0099"}  # a prefix of none of the five: its field is kept
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    items = SFESuite().load(root).items
    assert {i.id: i.discipline for i in items if i.meta["task_id"][0] != "X"} == {
        i.id: {"A": "Astronomy", "C": "Chemistry", "E": "Earth", "L": "Life", "M": "Material"}[
            i.meta["task_id"][0]
        ]
        for i in items
        if i.meta["task_id"][0] != "X"
    }
    assert next(i for i in items if i.meta["task_id"] == "X001").discipline == "astrophysics"
    # the prompt still names the record's own field, as the official construct_prompt does
    item = next(i for i in items if i.id == "en/E011/0005")
    assert SFESuite().prompt_text(item).startswith("You are an expert in Earth Science and need to solve")


def test_the_official_open_bertscore_counts_an_unparseable_answer_as_zero(sfe_dataset, minilm_scorer) -> None:
    suite = SFESuite({"bertscore": "minilm"})
    suite._scorer = minilm_scorer  # one model per session
    opens = [
        item for item in sfe_dataset.items if item.task == "open_ended" and item.meta["language"] == "en"
    ]
    item = opens[0]
    answer = str(item.meta["answer_raw"])
    good = (item, Extraction.found(answer, "reply_without_reasoning"), None, answer)
    empty = (
        item.model_copy(update={"id": "en/copy"}),
        Extraction.unparseable("only reasoning"),
        None,
        "<think>x</think>",
    )
    values = suite.extra_metrics([good, empty])
    assert values[item.id]["bertscore_f1"] == values[item.id]["bertscore_f1_official"]
    assert values[item.id]["bertscore_f1"] == pytest.approx(1.0, abs=0.01)  # the answer itself
    assert values["en/copy"]["bertscore_f1"] is None  # ours: no value (counted in n_missing)
    assert values["en/copy"]["bertscore_f1_official"] == 0.0  # the official aggregation: 0
    columns = [c["key"] for group in suite.table_layout() for c in group["columns"]]
    assert "bert_official:en" in columns and "bert:en" in columns
