"""The exported lmms-eval package: lmms-eval's schema, expvid's prompts, and the same numbers as `expvid score`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lmms_harness import TASKS, load_task_yaml
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.expvid_prompts import build_prompt
from expvid.suites.expvid_suite import load_expvid

runner = CliRunner()

# Field names of lmms-eval's TaskConfig (lmms_eval/api/task.py), GroupConfig and AggMetricConfig
# (lmms_eval/api/group.py) at EvolvingLMMs-Lab/lmms-eval 75571cf; `include` is consumed by its YAML loader.
TASK_FIELDS = {
    "task", "task_alias", "tag", "group", "group_alias", "dataset_path", "dataset_name", "dataset_kwargs",
    "training_split", "validation_split", "test_split", "fewshot_split", "full_docs", "process_results_use_image",
    "process_docs", "doc_to_visual", "doc_to_text", "doc_to_target", "doc_to_choice", "doc_to_messages",
    "process_results", "use_prompt", "description", "target_delimiter", "fewshot_delimiter", "fewshot_config",
    "num_fewshot", "metric_list", "output_type", "generation_kwargs", "repeats", "filter_list",
    "should_decontaminate", "doc_to_decontamination_query", "cluster_key", "score_key", "metadata",
    "lmms_eval_specific_kwargs", "model_specific_generation_kwargs", "model_specific_target_kwargs",
    "reasoning_tags", "auto_strip_thinking",
}  # fmt: skip
GROUP_FIELDS = {"group", "group_alias", "task", "aggregate_metric_list", "metadata"}
AGG_FIELDS = {"metric", "aggregation", "weight_by_size", "filter_list"}
OUTPUT_TYPES = {"loglikelihood", "multiple_choice", "generate_until"}


def test_every_file_follows_lmms_eval_task_and_group_formats(package: Path, sample_dir: Path) -> None:
    yamls = sorted(package.glob("*.yaml"))
    tasks = [p for p in yamls if "task" in load_task_yaml(p) and "group" not in load_task_yaml(p)]
    groups = [p for p in yamls if "group" in load_task_yaml(p)]
    assert len(tasks) == 10 and {p.stem for p in groups} == {"expvid", "expvid_l1", "expvid_l2", "expvid_l3"}
    for path in tasks:
        config = load_task_yaml(path)
        assert set(config) <= TASK_FIELDS, set(config) - TASK_FIELDS
        assert config["output_type"] in OUTPUT_TYPES and config["task"] == path.stem
        assert Path(config["dataset_kwargs"]["data_files"]["test"]).is_file()
        for hook in ("doc_to_visual", "doc_to_text", "doc_to_target", "process_results"):
            assert callable(config[hook]), (path.name, hook)
        (metric,) = config["metric_list"]
        assert metric["metric"] == "expvid_score" and callable(metric["aggregation"])
        assert (
            config["generation_kwargs"]["temperature"] == 0.1
            and config["generation_kwargs"]["max_new_tokens"] == 8192
        )
    names = {p.stem for p in yamls}
    for path in groups:
        config = load_task_yaml(path)
        assert set(config) <= GROUP_FIELDS and all(member in names for member in config["task"])
        for entry in config.get("aggregate_metric_list", []):
            assert (
                set(entry) <= AGG_FIELDS and entry["aggregation"] == "mean"
            )  # lmms-eval's only group aggregation
    assert load_task_yaml(package / "expvid_l1.yaml")["aggregate_metric_list"][0]["weight_by_size"] is True
    assert load_task_yaml(package / "expvid_l2.yaml")["aggregate_metric_list"][0]["weight_by_size"] is False


def test_prompts_and_videos_are_expvids(harness, sample_dir: Path) -> None:
    dataset = load_expvid(sample_dir)
    for task in TASKS:
        config = load_task_yaml(harness.package / f"expvid_{task}.yaml")
        docs = __import__("datasets").load_dataset(
            "json", cache_dir=str(harness.cache), **config["dataset_kwargs"]
        )["test"]
        items = [i for i in dataset if i.task == task]
        assert len(docs) == len(items)
        for doc, item in zip(docs, items, strict=True):
            assert config["doc_to_text"](doc, {"default": {}}) == build_prompt(item)
            assert config["doc_to_visual"](doc) == [item.media.path]  # type: ignore[union-attr]


def test_numbers_agree_with_expvid_score_task_by_task_and_level_by_level(
    lmms_run, harness, sample_dir, tmp_path
) -> None:
    run, _ = lmms_run
    predictions = tmp_path / "predictions.jsonl"
    with predictions.open("w", encoding="utf-8") as handle:
        for task, values in run.values.items():
            for value, response in zip(values, run.responses[task], strict=True):
                handle.write(json.dumps({"id": value["expvid_id"], "response": response.strip()}) + "\n")
    result = runner.invoke(
        app,
        [
            "score",
            "--data",
            str(sample_dir),
            "--predictions",
            str(predictions),
            "--out",
            str(tmp_path / "scored"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "scored" / "scores.json").read_text())
    for task in TASKS:
        assert run.scores[f"expvid_{task}"] == pytest.approx(scores["tasks"][task]["score"], abs=1e-9), task
    assert 0 < run.scores["expvid_tools"] < 100  # the scripted answers are neither all right nor all wrong
    assert harness.group("expvid_l2", run) == pytest.approx(scores["levels"]["L2"]["score"], abs=1e-9)
    statuses = {v["status"] for values in run.values.values() for v in values}
    assert statuses == {"ok", "unparseable"}  # no guess stands in for an unreadable answer


def test_level_one_group_is_pooled_like_table_2(lmms_run, harness, sample_dir, tmp_path) -> None:
    run = harness.run(["expvid_tools", "expvid_materials"], lambda c, d, i: "\\boxed{A}" if i % 3 else "x")
    pooled = sum(v["earned"] for t in run.values for v in run.values[t]) / sum(run.sizes.values())
    assert harness.group("expvid_l1", run) == pytest.approx(100 * pooled)


def test_export_cli_reports_and_refuses_a_bad_prefix(sample_dir, tmp_path) -> None:
    result = runner.invoke(
        app,
        [
            "export",
            "lmms-eval",
            str(tmp_path / "pkg"),
            "--data",
            str(sample_dir),
            "--tasks",
            "tools,quantity",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "wrote 2 task(s) and 2 group(s)" in result.output  # the L1 group and the whole-benchmark group
    assert sorted(p.name for p in (tmp_path / "pkg").glob("*.yaml")) == [
        "expvid.yaml",
        "expvid_l1.yaml",
        "expvid_quantity.yaml",
        "expvid_tools.yaml",
    ]
    bad = runner.invoke(
        app, ["export", "lmms-eval", str(tmp_path / "p2"), "--data", str(sample_dir), "--prefix", "Exp-Vid"]
    )
    assert bad.exit_code == 2 and "--prefix" in bad.output


def test_hub_id_tasks_read_the_card_configs(sample_dir, tmp_path) -> None:
    from expvid.export.lmms_eval import write_lmms_eval_package

    write_lmms_eval_package(
        tmp_path / "pkg", sample_dir, tasks=["tools"], hub_id="OpenGVLab/ExpVid", revision="abc123"
    )
    config = load_task_yaml(tmp_path / "pkg" / "expvid_tools.yaml")
    assert (config["dataset_path"], config["dataset_name"]) == ("OpenGVLab/ExpVid", "level1_tools")
    assert config["dataset_kwargs"] == {"revision": "abc123"}
