"""`expvid score --from lmms-eval LOGDIR`: lmms-eval's logged samples scored by expvid, item by item."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lmms_harness import TASKS, scripted_model
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.scivideobench import load_scivideobench, make_scivideobench_sample

runner = CliRunner()


def _rows(out: Path) -> list[dict]:  # type: ignore[type-arg]
    return [
        json.loads(line)
        for line in (out / "lmms_eval_comparison.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def test_logs_of_the_exported_package_match_item_by_item(lmms_run, sample_dir, tmp_path) -> None:
    run, logdir = lmms_run
    out = tmp_path / "compared"
    result = runner.invoke(app, ["score", "--from", "lmms-eval", str(logdir), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output  # --data comes from the package's metadata in results.json
    rows = _rows(out)
    assert len(rows) == sum(run.sizes.values()) and all(row["agree"] is True for row in rows)
    assert {row["lmms_eval"]["metric"] for row in rows} == {"expvid_score"}
    assert "| expvid_tools | 18 |" in result.output
    scores = json.loads((out / "scores.json").read_text())
    for task in TASKS:
        assert scores["tasks"][task]["score"] == run.scores[f"expvid_{task}"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset_root"] == str(sample_dir.resolve())


def test_old_format_logs_are_matched_by_their_documents(harness, sample_dir, tmp_path) -> None:
    logdir = tmp_path / "old"
    run = harness.run(["expvid_tools", "expvid_step_prediction"], scripted_model, logdir, old_format=True)
    for path in logdir.rglob("*samples_*.jsonl"):  # a package of its own: no expvid ids, plain 0/1 metrics
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            value = line.pop("expvid_score")
            line["accuracy"] = value["earned"]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "compared"
    result = runner.invoke(
        app,
        [
            "score",
            "--from",
            "lmms-eval",
            str(logdir),
            "--data",
            str(sample_dir),
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    assert len(rows) == sum(run.sizes.values()) and all(row["agree"] for row in rows)
    assert {row["item"].split("/")[0] for row in rows} == {"tools", "step_prediction"}


def test_new_format_logs_without_documents_are_matched_by_doc_id_and_checked_by_target(
    harness, sample_dir, tmp_path
) -> None:
    logdir = tmp_path / "new"
    harness.run(["expvid_tools"], scripted_model, logdir)
    path = next(logdir.rglob("*samples_expvid_tools.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        line["acc"] = line.pop("expvid_score")["earned"]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "compared"
    ok = runner.invoke(
        app,
        [
            "score",
            "--from",
            "lmms-eval",
            str(logdir),
            "--data",
            str(sample_dir),
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert ok.exit_code == 0, ok.output
    assert [row["item"] for row in _rows(out)] == [f"tools/{k}" for k in range(18)]

    lines[2]["target"] = "Z"  # the log was made from other data: refuse rather than mis-match
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    bad = runner.invoke(
        app,
        [
            "score",
            "--from",
            "lmms-eval",
            str(logdir),
            "--data",
            str(sample_dir),
            "--out",
            str(tmp_path / "b"),
            "--quiet",
        ],
    )
    compact = "".join(bad.output.split())  # whatever the terminal width
    assert bad.exit_code == 2 and f"{path.name}:3:" in compact and "loggedtarget'Z'" in compact


def test_official_scivideobench_logs_show_where_the_official_reader_guessed(tmp_path) -> None:
    """Logs of lmms-eval's own `scivideobench` task (its metric dict, its random letter when nothing parses)."""
    root = tmp_path / "svb"
    make_scivideobench_sample(root)
    records = [json.loads(line) for line in (root / "scivideobench_1k.jsonl").read_text().splitlines()]
    responses = ["B", "The answer is A", "I am not sure, it depends on many factors in the video", "(C)"]
    logdir = tmp_path / "logs" / "gpt4o"
    logdir.mkdir(parents=True)
    lines = []
    for doc_id, record in enumerate(records):
        text = responses[doc_id % len(responses)]
        guessed = doc_id % len(responses) == 2
        pred = record["answer"] if guessed else text.replace("The answer is ", "").strip("()")
        value = {"id": record["video_id"], "question_type": record["question_type"], "category": "UNKNOWN",
                 "pred_answer": pred, "answer": record["answer"], "correct": pred == record["answer"], "raw_output": text}  # fmt: skip
        lines.append(
            {"doc_id": doc_id, "target": record["answer"], "filtered_resps": text, "scivideobench_acc": value}
        )
    (logdir / "20260101_000000_samples_scivideobench.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines)
    )
    out = tmp_path / "compared"
    result = runner.invoke(
        app,
        [
            "score",
            "--from",
            "lmms-eval",
            str(tmp_path / "logs"),
            "--data",
            str(root),
            "--suite",
            "scivideobench",
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = _rows(out)
    ids = {item.id for item in load_scivideobench(root)}
    assert {row["item"] for row in rows} == ids and len(rows) == len(records)
    guesses = [row for row in rows if row["lmms_eval"]["value"]["raw_output"] == responses[2]]
    assert guesses and all(
        row["lmms_eval"]["score"] == 1.0 and row["expvid"]["status"] == "unparseable" for row in guesses
    )
    assert all(
        row["agree"] is False for row in guesses
    )  # the official random letter happened to be right; expvid never guesses
    assert all(row["agree"] for row in rows if row not in guesses)
    assert "first disagreements" in result.output


def test_logs_of_other_benchmarks_are_skipped_and_named(lmms_run, sample_dir, tmp_path) -> None:
    _, logdir = lmms_run
    mixed = tmp_path / "mixed"
    shutil.copytree(logdir, mixed)
    (mixed / "model__sanitized" / "20260101_120000_samples_mmmu_val.jsonl").write_text(
        json.dumps({"doc_id": 0, "target": "A", "filtered_resps": "A", "mmmu_acc": {"id": "x"}}) + "\n"
    )
    result = runner.invoke(
        app,
        [
            "score",
            "--from",
            "lmms-eval",
            str(mixed),
            "--data",
            str(sample_dir),
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "skipped" in result.output and "mmmu_val" in result.output
    empty = runner.invoke(
        app, ["score", "--from", "lmms-eval", str(tmp_path / "nothing"), "--data", str(sample_dir)]
    )
    assert empty.exit_code != 0


def test_task_scores_are_compared_with_what_lmms_eval_reported(lmms_run, tmp_path) -> None:
    """Per-blank accuracy pools blanks: lmms-eval's reported task score is not the mean of its items."""
    run, logdir = lmms_run
    task = "expvid_scientific_discovery"
    values = run.values[task]
    per_item_mean = 100 * sum(v["earned"] / v["possible"] for v in values) / len(values)
    assert abs(per_item_mean - run.scores[task]) > 0.5  # the condition is real in this data
    result = runner.invoke(
        app, ["score", "--from", "lmms-eval", str(logdir), "--out", str(tmp_path / "o"), "--quiet"]
    )
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith(f"| {task} |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2] == f"{run.scores[task]:.2f}" == cells[3]  # reported by lmms-eval == expvid's pooled score
    assert "no results.json" not in result.output


def test_a_log_folder_with_two_models_is_scored_model_by_model(lmms_run, tmp_path) -> None:
    _, logdir = lmms_run
    both = tmp_path / "logs"
    shutil.copytree(logdir, both)
    other = both / "other__model"
    shutil.copytree(both / "model__sanitized", other)
    for path in other.glob("*samples_*.jsonl"):  # another model: every answer unreadable
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            line["filtered_resps"] = "no idea"
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (other / "20260101_120000_results.json").unlink()
    out = tmp_path / "scored"
    result = runner.invoke(app, ["score", "--from", "lmms-eval", str(both), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "### model__sanitized" in result.output and "### other__model" in result.output
    first = json.loads((out / "model__sanitized" / "scores.json").read_text())
    second = json.loads((out / "other__model" / "scores.json").read_text())
    assert first["tasks"]["tools"]["score"] > 0 and second["tasks"]["tools"]["score"] == 0.0
    assert "no results.json beside the samples" in result.output  # the second model's table says so


def test_the_exported_package_runs_from_wherever_it_is_copied(sample_dir, tmp_path) -> None:
    from lmms_harness import LmmsHarness, scripted_model

    from expvid.export.lmms_eval import write_lmms_eval_package

    site = tmp_path / "exporting-machine"
    shutil.copytree(sample_dir / "annotations", site / "ExpVid" / "annotations")
    shutil.copytree(sample_dir / "videos", site / "ExpVid" / "videos")
    write_lmms_eval_package(site / "lmms_tasks", site / "ExpVid", tasks=["tools"])
    cluster = tmp_path / "cluster"
    shutil.copytree(site, cluster)
    shutil.rmtree(site)  # nothing of the exporting machine is left
    package = cluster / "lmms_tasks"
    raw = (package / "expvid_tools.yaml").read_text()
    assert "data_files:\n    test: annotations/level1/tools.jsonl" in raw  # relative to the package
    # The exporting machine's folder stays only as a record (metadata.exported_from), never as a path used.
    used = [line for line in raw.splitlines() if str(site) in line]
    assert all(line.strip().startswith("exported_from:") for line in used), used
    run = LmmsHarness(package, tmp_path / "hf").run(["expvid_tools"], scripted_model)
    assert run.sizes["expvid_tools"] == 18 and run.scores["expvid_tools"] > 0
