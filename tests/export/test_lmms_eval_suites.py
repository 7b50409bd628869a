"""The lmms-eval exporter asks the suite: an MMVU package (one release file holding two tasks) gives
lmms-eval the suite's prompts and videos and the numbers `expvid score` gives for the same replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lmms_harness import LmmsHarness, load_task_yaml
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.mmvu import MMVUSuite, make_mmvu_sample

runner = CliRunner()


def mmvu_model(context: str, doc: dict, doc_id: int) -> str:  # type: ignore[type-arg]
    """The right letter on even documents, a wrong one on odd ones; open questions: the gold answer once."""
    if doc["question_type"] == "multiple-choice":
        letter = doc["answer"] if doc_id % 2 == 0 else ("B" if doc["answer"] != "B" else "C")
        return f"Reasoning... Therefore, the final answer is: {letter}"
    return f"Therefore, the final answer is: 'Answer: {doc['answer'] if doc_id == 0 else 'unknown'}'"


@pytest.fixture(scope="module")
def mmvu_package(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("mmvu") / "release"
    make_mmvu_sample(root)
    out = root.parent / "mmvu_tasks"
    result = runner.invoke(app, ["export", "lmms-eval", str(out), "--data", str(root), "--suite", "mmvu",
                                 "-S", "prompt=direct"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "wrote 2 task(s) and 2 group(s)" in result.output  # MC and open; the Overall level, the suite
    return root, out


def test_an_mmvu_package_asks_the_suite(mmvu_package, tmp_path) -> None:
    root, package = mmvu_package
    config = load_task_yaml(package / "expvid_mmvu_open_ended.yaml")
    assert (
        config["generation_kwargs"]["temperature"] == 1.0
        and config["generation_kwargs"]["max_new_tokens"] == 1024
    )
    assert config["metadata"]["frames_paper"] == 32 and config["metadata"]["expvid_suite"] == "mmvu"
    harness = LmmsHarness(package, tmp_path / "hf")
    suite = MMVUSuite({"prompt": "direct"})
    items = {item.id: item for item in suite.load(root).items}
    run = harness.run(
        ["expvid_mmvu_multiple_choice", "expvid_mmvu_open_ended"], mmvu_model, tmp_path / "logs"
    )
    assert run.sizes == {
        "expvid_mmvu_multiple_choice": 4,
        "expvid_mmvu_open_ended": 4,
    }  # process_docs keeps each task's records
    docs = __import__("datasets").load_dataset(
        "json", cache_dir=str(tmp_path / "hf"), **config["dataset_kwargs"]
    )["test"]
    first = next(doc for doc in docs if doc["question_type"] == "open-ended")
    assert config["doc_to_text"](first, {}) == suite.prompt_text(items[first["id"]])  # -S prompt=direct kept
    assert config["doc_to_visual"](first) == [items[first["id"]].media.path]  # type: ignore[union-attr]

    predictions = tmp_path / "predictions.jsonl"
    with predictions.open("w") as handle:
        for task, values in run.values.items():
            for value, response in zip(values, run.responses[task], strict=True):
                handle.write(json.dumps({"id": value["expvid_id"], "response": response}) + "\n")
    scored = runner.invoke(app, ["score", "--suite", "mmvu", "--data", str(root), "--predictions", str(predictions),
                                 "--out", str(tmp_path / "scored"), "--quiet"])  # fmt: skip
    assert scored.exit_code == 0, scored.output
    scores = json.loads((tmp_path / "scored" / "scores.json").read_text())
    assert (
        run.scores["expvid_mmvu_multiple_choice"]
        == pytest.approx(scores["tasks"]["multiple_choice"]["score"])
        == 50.0
    )
    assert (
        run.scores["expvid_mmvu_open_ended"] == pytest.approx(scores["tasks"]["open_ended"]["score"]) == 25.0
    )
    compared = runner.invoke(app, ["score", "--from", "lmms-eval", str(tmp_path / "logs"), "--suite", "mmvu",
                                   "--out", str(tmp_path / "compared"), "--quiet"])  # fmt: skip
    assert compared.exit_code == 0, compared.output  # --data from the package's metadata, ids from the metric
    assert (
        "| expvid_mmvu_multiple_choice | 4 | 50.00 | 50.00 | 4 | 0 |" in compared.output
    )  # reported, expvid
