"""Annotation faults and corrections: ProMQA's hand corrections, steps the graph lacks, the 4K filter.

`data/captaincook4d_corrected` holds the 34 CaptainCook4D recordings ProMQA corrected by hand, as
published; 51 released examples come from them, 22 of which the published annotations cannot give.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from expvid.construction.recipes.promqa.availability import recordings_with_4k
from expvid.construction.recipes.promqa.captaincook import Corpus, load_captaincook
from expvid.construction.recipes.promqa.config import build_config, recipe_options
from expvid.construction.recipes.promqa.corrections import read_corrections
from expvid.construction.recipes.promqa.estimate import estimate_promqa
from expvid.construction.recipes.promqa.examples import recording_examples
from expvid.construction.recipes.promqa.inputs import load_corpus
from expvid.schema import DataError

DATA = Path(__file__).resolve().parent / "data"
CORRECTED = DATA / "captaincook4d_corrected"
LINKS = DATA / "captaincook4d_downloader" / "metadata" / "download_links.json"


def _made(corpus: Corpus) -> dict[str, dict[str, Any]]:
    return {
        e.question_id: e.record()
        for recording in corpus.recordings
        for e in recording_examples(recording, corpus.recipe_for(recording)).examples
    }


def _identical(made: dict[str, dict[str, Any]], expected: list[dict[str, Any]]) -> int:
    return sum(
        1
        for r in expected
        if r["question_id"] in made and made[r["question_id"]] == {k: r[k] for k in made[r["question_id"]]}
    )


def test_promqas_corrections_rebuild_every_released_example_of_the_recordings_it_corrected(
    released: list[dict[str, Any]],
) -> None:
    plain = load_captaincook(CORRECTED)
    ids = {r.recording_id for r in plain.recordings}
    assert len(ids) == 34 and not plain.problems
    expected = [r for r in released if r["recording_id"] in ids]
    assert len(expected) == 51
    assert _identical(_made(plain), expected) == 29  # 22 cannot be rebuilt from the published records
    corrected = load_captaincook(CORRECTED, corrections=read_corrections("promqa"))
    assert corrected.corrections is not None
    outcome = corrected.corrections.as_dict()
    assert outcome["applied"] == 46 and outcome["not_applied"] == [] and outcome["not_in_corpus"] == 0
    assert len(outcome["recordings"]) == 34
    assert _identical(_made(corrected), expected) == 51
    assert not any("not a step of the recipe" in w for w in corrected.warnings)


def test_a_step_not_in_the_recipe_costs_only_the_prefixes_that_hold_it() -> None:
    plain = load_captaincook(CORRECTED)
    warnings = [w for w in plain.warnings if "not a step of the recipe" in w]
    assert len(warnings) == 2 and all(w.startswith("error_annotations.json:") for w in warnings)
    assert {"2_26", "17_49"} <= {r.recording_id for r in plain.recordings}  # the recordings still load
    corrected = load_captaincook(CORRECTED, corrections=read_corrections("promqa"))
    ours = {k: v for k, v in _made(plain).items() if k.startswith("17_49_")}
    truth = {k: v for k, v in _made(corrected).items() if k.startswith("17_49_")}
    # 17_49's fault is only its chat/chaat typo (step 11 of the recipe): every prefix without that
    # step is made exactly as the corrected record makes it, every prefix holding it is left out.
    holds = {
        k for k, v in truth.items() if 11 in [s["step_id"] for s in [*v["previous_steps"], v["current_step"]]]
    }
    assert len(truth) == 38 and len(holds) == 24
    assert ours == {k: v for k, v in truth.items() if k not in holds}
    recording = next(r for r in plain.recordings if r.recording_id == "17_49")
    skipped = recording_examples(recording, plain.recipe_for(recording)).skipped
    assert skipped["the prefix holds a step that is not in the recipe graph"] == 7  # steps 4..10
    assert len([k for k in _made(plain) if k.startswith("2_26_")]) == 28  # of 31 once corrected


def test_a_step_that_lasts_no_time_costs_only_its_own_examples(sample_sources: Path, tmp_path: Path) -> None:
    copy = tmp_path / "src"
    for folder in ("annotation_json", "task_graphs"):
        shutil.copytree(sample_sources / folder, copy / folder)
    before = _made(load_captaincook(copy))
    path = copy / "annotation_json" / "error_annotations.json"
    records = json.loads(path.read_text())
    step = records[0]["step_annotations"][2]  # 1_1, 21-27 s
    step["end_time"] = step["start_time"]
    path.write_text(json.dumps(records, indent=4))
    corpus = load_captaincook(copy)
    assert len(corpus.recordings) == 6 and not corpus.problems
    assert any("1_1" in w and "ends at or before its start" in w for w in corpus.warnings)
    after = _made(corpus)
    lost = set(before) - set(after)
    node = next(r for r in corpus.recordings if r.recording_id == "1_1").steps[3].step_id
    assert lost and all(before[k]["current_step"]["step_id"] == node and k.startswith("1_1_") for k in lost)
    # Later prefixes still list the step as done (it was performed), so their targets are unchanged.
    assert {k: v for k, v in before.items() if k not in lost and k.startswith("1_1_")} == {
        k: v for k, v in after.items() if k.startswith("1_1_")
    }


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "fixes.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("format: expvid-annotation-corrections/1\ncorrections: [\n", 3, "not valid YAML"),
        ("corrections: []\n", 1, "format: expvid-annotation-corrections/1"),
        (
            "format: expvid-annotation-corrections/1\ncorrections:\n  - recording: '1_1'\n    step: 0\n"
            "    set: {description: x}\n  - recording: '1_1'\n    step: 1\n    expect: {step_id: 3}\n",
            6,
            "either `set`",
        ),
        (
            "format: expvid-annotation-corrections/1\ncorrections:\n  - recording: '1_1'\n    step: 0\n"
            "    set: {colour: red}\n",
            3,
            "colour",
        ),
        (
            "format: expvid-annotation-corrections/1\ncorrections:\n  - {recording: '1_1', step: 2, remove: true}\n"
            "  - {recording: '1_1', step: 2, set: {errors: []}}\n",
            4,
            "corrected on line 3 too",
        ),
        (
            "format: expvid-annotation-corrections/1\ncorrections:\n"
            "  - {recording: '1_1', step: 2, set: {errors: [{tag: Order Error}]}}\n",
            3,
            "list of {tag, description}",
        ),
    ],
)
def test_a_malformed_corrections_file_is_refused_with_its_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(DataError) as raised:
        read_corrections(path)
    assert f"{path}:{line}:" in str(raised.value) and message in str(raised.value)


def test_corrections_that_do_not_match_are_reported_and_the_others_applied(
    sample_sources: Path, tmp_path: Path
) -> None:
    path = _write(
        tmp_path,
        "format: expvid-annotation-corrections/1\ncorrections:\n"
        "  - {recording: '1_1', step: 0, expect: {start_time: 6}, set: {start_time: 7.5}}\n"
        "  - {recording: '1_1', step: 1, expect: {start_time: 99}, set: {start_time: 14}}\n"
        "  - {recording: '2_3', step: 3, expect: {step_id: 106}, remove: true}\n"
        "  - {recording: '9_9', step: 0, remove: true}\n",
    )
    corpus = load_captaincook(sample_sources, corrections=read_corrections(path))
    assert corpus.corrections is not None
    outcome = corpus.corrections.as_dict()
    assert (
        outcome["applied"] == 2 and outcome["not_in_corpus"] == 1 and outcome["recordings"] == ["1_1", "2_3"]
    )
    [problem] = outcome["not_applied"]
    assert problem.startswith(f"{path}:4: 1_1 step 1: not applied, start_time is 13")
    by_id = {r.recording_id: r for r in corpus.recordings}
    assert by_id["1_1"].steps[1].start == 7.5 and by_id["1_1"].steps[2].start == 13.0
    assert len(by_id["2_3"].steps) == 1 + 5  # START + the six published steps less the removed one
    # The published files are untouched.
    assert (
        json.loads((sample_sources / "annotation_json/error_annotations.json").read_text())[0][
            "step_annotations"
        ][0]["start_time"]
        == 6.0
    )


def test_promqas_release_holds_only_recordings_published_in_4k(released: list[dict[str, Any]]) -> None:
    with_4k = recordings_with_4k(LINKS)
    everything = set(json.loads(LINKS.read_text()))
    assert len(everything) == 384 and len(with_4k) == 363
    assert {r["recording_id"] for r in released} <= with_4k


def test_the_4k_filter_leaves_out_recordings_without_4k(sample_sources: Path, tmp_path: Path) -> None:
    links = tmp_path / "download_links.json"
    links.write_text(json.dumps({r: {"gopro_360p": "x", **({"gopro_4k": "y"} if r != "1_2" else {})}
                                 for r in ("1_1", "1_2", "1_3", "2_1", "2_2", "2_3")}))  # fmt: skip
    options = recipe_options(["require_4k=true", f"download_links={links}", "sample=false"])
    config = build_config(sources=sample_sources, out=tmp_path / "out", llm="openai:m@http://127.0.0.1:9/v1",
                          options=options)  # fmt: skip
    corpus = load_corpus(config)
    assert corpus.excluded == {"1_2": "no 4K video (download_links.json)"}
    assert "1_2" not in {r.recording_id for r in corpus.recordings}
    plan = estimate_promqa(config)
    full = estimate_promqa(config.model_copy(update={"require_4k": False}))
    assert plan["excluded"] == {"1_2": "no 4K video (download_links.json)"}
    assert 0 < plan["examples"] < full["examples"] and plan["recordings"] == full["recordings"] - 1
    with pytest.raises(DataError, match="download_links=PATH"):
        load_corpus(config.model_copy(update={"download_links": None}))
