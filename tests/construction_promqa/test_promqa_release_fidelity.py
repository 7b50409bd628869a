"""The recipe against ProMQA's real release: prompts, parsing, verification and example creation.

The release (`examples.json`) holds, for each of its 401 examples, the prompt that was sent, the
generator's raw reply and parsed pairs, both judgements and the adjudication. Everything here is
rebuilt from each record's own inputs and compared with what was published.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from expvid.construction.recipes.promqa.captaincook import load_captaincook
from expvid.construction.recipes.promqa.examples import recording_examples
from expvid.construction.recipes.promqa.graph import RecipeGraph
from expvid.construction.recipes.promqa.parsing import parse_pairs
from expvid.construction.recipes.promqa.prompting import generation_prompt
from expvid.construction.recipes.promqa.verification import (
    initial_adjudication,
    needs_adjudication,
    release_record,
    settle,
)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def test_every_released_prompt_is_rebuilt_byte_for_byte(
    released: list[dict[str, Any]], released_recipes: dict[str, RecipeGraph]
) -> None:
    assert len(released) == 401
    kinds = Counter(r["type"] for r in released)
    assert set(kinds) == {"next", "missing", "order", "measurement", "preparation", "technique",
                          "temperature", "timing"}  # fmt: skip
    differing = [
        r["question_id"]
        for r in released
        if generation_prompt(r, released_recipes[r["activity_name"]]) != r["generation"]["prompt"]
    ]
    assert differing == []
    assert {r["generation"]["template_type"] for r in released} == {"step-target"}


def test_every_released_response_parses_into_its_qas(released: list[dict[str, Any]]) -> None:
    for record in released:
        ours = [pair.as_dict() for pair in parse_pairs(record["generation"]["response"], "official")]
        assert sorted(map(_key, ours)) == sorted(map(_key, record["generation"]["qas"])), record[
            "question_id"
        ]
        # The picked pair is the first of the released list and the question that was verified.
        assert record["generation"]["qas"][0]["question"] == record["verification"]["question"]
    five = [r for r in released if len(r["generation"]["qas"]) == 5]
    assert len(five) == 2  # replies with more pairs than asked are kept, as the official code did


def test_verification_and_adjudication_follow_table_14(released: list[dict[str, Any]]) -> None:
    adjudicated = 0
    for record in released:
        published = record["adjudication"]
        ours = initial_adjudication(record["verification"], key=record["question_id"])

        def pooled(adjudication: dict[str, Any]) -> list[str]:
            rows = zip(
                adjudication["answers"],
                adjudication["answer_tags"],
                adjudication["init"]["answers"],
                strict=True,
            )
            return sorted(map(_key, rows))

        assert pooled(ours) == pooled(published), record["question_id"]
        assert ours["init"]["question"] == published["init"]["question"]
        assert needs_adjudication(published) == ("judge" in published)
        adjudicated += "judge" in published
        settled = settle(published)
        assert settled.approved
        rebuilt = release_record(
            {k: v for k, v in record.items() if k not in ("adjudication", "verification")},
            record["verification"],
            published,
            settled.fields,
        )
        assert list(rebuilt) == list(record) and rebuilt == record, record["question_id"]
    assert adjudicated == 208


def test_captaincook_annotations_make_the_released_examples(
    captaincook_dir: Path, released: list[dict[str, Any]]
) -> None:
    corpus = load_captaincook(captaincook_dir)
    assert not corpus.problems
    assert len(corpus.recordings) == 10
    made = {
        e.question_id: e.record()
        for recording in corpus.recordings
        for e in recording_examples(recording, corpus.recipe_for(recording)).examples
    }
    ids = {r.recording_id for r in corpus.recordings}
    expected = [r for r in released if r["recording_id"] in ids]
    assert len(expected) == 19
    assert {r["type"] for r in expected} >= {"next", "missing", "order", "timing", "technique"}
    for record in expected:
        ours = made[record["question_id"]]
        published = {k: record[k] for k in ours}
        assert ours == published, record["question_id"]
    # The START prefix and a recipe that repeats step texts are among them.
    assert any(r["current_step"]["step_id"] == -1 for r in expected)
    assert any(r["activity_name"] == "Dressed Up Meatballs" for r in expected)
