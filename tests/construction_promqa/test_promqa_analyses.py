"""The construction tables and the self-preference checks on hand-made campaigns and run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from expvid.construction.recipes.promqa.tables import (
    construction_tables,
    read_answer_types,
    tables_markdown,
    write_answer_types_template,
)
from expvid.suites.promqa.self_preference import self_preference, self_preference_markdown
from expvid.suites.promqa.spec import answer_type_group


def _row(qid: str, state: str, template: str, generator: str, tags: list[str], **extra: object) -> dict:
    answers = [f"{qid} answer {i}" for i in range(len(tags))]
    final = {"answers": answers, "answer_tags": tags} if state == "verified" else None
    return {"question_id": qid, "type": "next", "state": state, "template": template, "generator": generator,
            "question_valid": state == "verified", "final": final, "settled_via": "agreement", **extra}  # fmt: skip


def test_tables_count_approval_sources_types_and_cost(tmp_path: Path) -> None:
    judges = {"judges": [{"question": True, "answers": [True]}, {"question": True, "answers": [False]}]}
    rows = [
        _row("a", "verified", "step-target", "gpt", ["machine"], verification=judges, annotators=["x", "y"],
             decision_seconds=[30.0, 90.0], adjudication_seconds=60.0),
        _row("b", "verified", "step-target", "gpt", ["annotator", "machine"]),
        _row("c", "rejected", "step-dot", "gpt", []),
        _row("d", "verified", "step-dot", "claude", ["adjudicator"]),
        _row("e", "in_review", "step-target", "claude", []),
    ]  # fmt: skip
    build = {
        "cost": {"including_cached": 0.25},
        "generation": {"seconds": 90.0},
        "calls": {"sent": 4, "cache_hits": 1},
    }
    labels_path = tmp_path / "answer_types.csv"
    assert write_answer_types_template(labels_path, [r for r in rows if r["final"]]) == 4
    text = labels_path.read_text().splitlines()
    text[1] += "direct"
    text[2] += "suggestion"
    text[3] += "direct"
    labels_path.write_text("\n".join(text) + "\n")
    labels = read_answer_types(labels_path)
    tables = construction_tables(rows, [build], minutes_per_qa=6, hourly_rate=30, answer_types=labels)
    assert tables["items"] == {"generated": 5, "settled": 4, "approved": 3, "open": 1}
    assert tables["table7_by_generator"]["gpt"]["rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert tables["table6_by_template"]["step-dot"] == {
        "recording": "step", "recipe": "DOT", "approved": 1, "total": 2, "rate": 0.5,
        "question_valid": {"approved": 1, "total": 2, "rate": 0.5},
    }  # fmt: skip
    assert tables["figure3_answer_source"] == {"machine": 1, "human": 1, "both": 1}
    assert tables["figure2_answers_by_source"]["next"] == {"machine": 2, "annotator": 1, "adjudicator": 1}
    assert tables["figure4_answer_types"]["direct"] == 1 and tables["figure4_answer_types"]["unlabelled"] == 1
    assert (
        tables["figure4_answer_types"]["suggestion"] == 0
        and sum(tables["figure4_answer_types"].values()) == 3
    )
    assert tables["agreement"]["by_pair"] == [
        {"annotators": ["x", "y"], "items": 1, "question": 1.0, "answers": 0.0}
    ]
    cost = tables["table5_cost"]
    assert cost["ours"] == {"usd": 0.25, "hours": 0.025, "calls": 5, "basis": cost["ours"]["basis"]}
    assert cost["human_estimate"]["hours"] == 0.5 and cost["human_estimate"]["usd"] == 15.0
    assert cost["verification_measured"]["hours"] == pytest.approx(180 / 3600, abs=1e-4)
    markdown = tables_markdown(tables)
    assert "| step | 0.50 (1/2) | - | 1.00 (2/2) |" in markdown and "0.2500 USD / 0.0250 h" in markdown
    bad = tmp_path / "bad.csv"
    bad.write_text("question_id,answer_index,answer,source,type\na,0,x,machine,sarcasm\n")
    with pytest.raises(ValueError, match=r"bad\.csv:2"):
        read_answer_types(bad)


def test_answer_type_groups_are_table_11s_columns() -> None:
    assert answer_type_group(["direct", "direct"]) == "direct"
    assert answer_type_group(["suggestion", "direct"]) == "direct & suggestion"
    assert answer_type_group(["intervention", "suggestion", "direct"]) == "all"
    assert answer_type_group(["intervention"]) == "intervention"


def _run(root: Path, name: str, predictor: str, judge: str, scores: dict[str, float], dataset: Path) -> Path:
    path = root / name
    path.mkdir()
    (path / "manifest.json").write_text(json.dumps({"suite": "promqa", "model": predictor,
        "judge": {"name": "promqa-ternary", "model": judge}, "dataset_root": str(dataset)}))  # fmt: skip
    (path / "item_scores.jsonl").write_text("".join(
        json.dumps({"item_id": qid, "task": "next", "status": "ok", "earned": s, "possible": 2.0,
                    "video_id": qid.split("_")[0]}) + "\n" for qid, s in scores.items()))  # fmt: skip
    return path


def test_self_preference_finds_a_bias_when_there_is_one(tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    dataset.mkdir()
    # 20 recordings, one item by each generator per recording.
    records = [
        {"question_id": f"r{r}_{g}", "generation": {"model_id": g}}
        for r in range(20)
        for g in ("gpt-4o", "gemini")
    ]
    (dataset / "examples.json").write_text(json.dumps(records))
    ids = [r["question_id"] for r in records]
    # gpt-4o does much better on its own questions; gemini does the same on both.
    gpt = {q: 2.0 if q.endswith("gpt-4o") else 0.5 for q in ids}
    gem = {q: 1.0 for q in ids}
    runs = [
        _run(tmp_path, "a", "openai:gpt-4o@http://x/v1", "gpt-4o-2024-08-06", gpt, dataset),
        _run(tmp_path, "b", "gemini:gemini", "gpt-4o-2024-08-06", gem, dataset),
    ]
    result = self_preference(runs)
    table = result["generator_predictor"]["gpt-4o-2024-08-06"]
    assert table["gpt-4o"] == {"gemini": 25.0, "gpt-4o": 100.0} and table["gemini"] == {
        "gemini": 50.0,
        "gpt-4o": 50.0,
    }
    checks = {(c["check"], c["model"]): c for c in result["checks"]}
    biased = checks[("generator-predictor", "gpt-4o")]
    assert (
        biased["difference"] == 75.0 and biased["interval95"][0] > 0 and biased["verdict"] == "favours itself"
    )
    assert checks[("generator-predictor", "gemini")]["verdict"] == "no sign of bias"
    markdown = self_preference_markdown(result)
    assert "| gpt-4o | 25.0 | 100.0 |" in markdown and "favours itself" in markdown


def test_socratic_pipelines_are_told_apart_by_their_answerer(tmp_path: Path) -> None:
    dataset = tmp_path / "data"
    dataset.mkdir()
    records = [
        {"question_id": f"r{r}_{g}", "generation": {"model_id": g}}
        for r in range(6)
        for g in ("gpt-4o", "llama")
    ]
    (dataset / "examples.json").write_text(json.dumps(records))
    ids = [r["question_id"] for r in records]
    llava = "openai:llava-1.5@http://127.0.0.1:8000/v1"
    runs = [
        _run(tmp_path, "s1", f"socratic:{llava}+openai:llama@http://127.0.0.1:8001/v1", "gpt-4o",
             dict.fromkeys(ids, 2.0), dataset),
        _run(tmp_path, "s2", f"socratic:{llava}+openai:qwen@http://127.0.0.1:8002/v1", "gpt-4o",
             dict.fromkeys(ids, 0.0), dataset),
        _run(tmp_path, "b", "blind:openai:llama@http://127.0.0.1:8001/v1", "gpt-4o", dict.fromkeys(ids, 1.0),
             dataset),
        _run(tmp_path, "v", "anthropic:claude-3-5-sonnet@20240620", "gpt-4o", dict.fromkeys(ids, 1.0), dataset),
    ]  # fmt: skip
    result = self_preference(runs)
    table = result["predictor_evaluator"]
    assert table == {
        "socratic:llava-1.5+llama": {"gpt-4o": 100.0},
        "socratic:llava-1.5+qwen": {"gpt-4o": 0.0},
        "blind:llama": {"gpt-4o": 50.0},
        "claude-3-5-sonnet@20240620": {"gpt-4o": 50.0},
    }
    # No pipeline is taken for its answerer: the generator "llama" has no own-row check.
    assert not any(c["model"] == "llama" for c in result["checks"])
    assert "| socratic:llava-1.5+qwen | 0.0 |" in self_preference_markdown(result)
