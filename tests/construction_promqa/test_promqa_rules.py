"""The recipe's rules on small, hand-made inputs: recipe graphs, B.1's skip rules, sampling, picking."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from expvid.construction.llm import InvalidReply
from expvid.construction.recipes.promqa.captaincook import load_captaincook
from expvid.construction.recipes.promqa.examples import Example, PrefixRules, hhmmss, recording_examples
from expvid.construction.recipes.promqa.graph import RecipeError, RecipeGraph
from expvid.construction.recipes.promqa.parsing import QAPair, pick_pair, released_qas, usable_pairs
from expvid.construction.recipes.promqa.sampling import SamplingSettings, sample_examples
from expvid.schema import DataError

#: START -> 1 -> {2, 3} -> 4 -> END, edges listed out of node order.
DIAMOND = {"steps": {"0": "START", "1": "a", "2": "b", "3": "c", "4": "d", "5": "END"},
           "edges": [[3, 4], [0, 1], [1, 2], [1, 3], [2, 4], [4, 5]]}  # fmt: skip


def graph(data: dict = DIAMOND) -> RecipeGraph:
    return RecipeGraph.from_release("9", "Diamond", data)


def test_next_and_missing_steps_follow_the_official_definitions() -> None:
    recipe = graph()
    # Node order is the order of first appearance in the edge list (networkx add_edges_from).
    assert recipe.node_order == (3, 4, 0, 1, 2, 5)
    assert recipe.next_steps([]) == [1]
    assert recipe.next_steps([1]) == [3, 2]
    assert recipe.next_steps([1, 2]) == [3]
    # 4 done before 3: 3 is missing, not next; END is never next.
    assert recipe.next_steps([1, 2, 4]) == []
    assert recipe.missing_steps([1, 2, 4]) == [3]
    assert recipe.missing_steps([1]) == []
    assert recipe.to_release() == {"name": "Diamond", **DIAMOND}


def test_bad_graphs_are_named() -> None:
    with pytest.raises(RecipeError, match="cycle"):
        graph({"steps": {"0": "START", "1": "a", "2": "b"}, "edges": [[0, 1], [1, 2], [2, 1]]})
    with pytest.raises(RecipeError, match="unknown step id"):
        graph({"steps": {"0": "START", "1": "a"}, "edges": [[0, 7]]})


@given(st.lists(st.tuples(st.integers(1, 7), st.integers(1, 7)), max_size=14), st.sets(st.integers(1, 7)))
def test_next_and_missing_match_networkx(raw_edges: list[tuple[int, int]], done: set[int]) -> None:
    nx = pytest.importorskip("networkx")
    edges = [(0, 1)] + [(a, b) for a, b in raw_edges if a < b]  # acyclic
    data = {
        "steps": {"0": "START", **{str(i): f"s{i}" for i in range(1, 8)}},
        "edges": [list(e) for e in edges],
    }
    recipe = graph(data)
    g = nx.DiGraph()
    g.add_edges_from(edges)
    passed = [n for n in done if n in g.nodes] + [0]
    nxt = [n for n in g.nodes if n not in passed and all(p in passed for p in g.predecessors(n))
           and not any(d in passed for d in nx.descendants(g, n))]  # fmt: skip
    missing = [n for n in g.nodes if n not in passed and any(a in passed for a in nx.ancestors(g, n))
               and any(d in passed for d in nx.descendants(g, n))]  # fmt: skip
    assert recipe.next_steps(done) == nxt
    assert recipe.missing_steps(done) == missing


def test_sample_sources_exercise_every_skip_rule(sample_sources: Path) -> None:
    corpus = load_captaincook(sample_sources)
    assert not corpus.problems and len(corpus.recordings) == 6
    assert any("re-ordered by start time" in w for w in corpus.warnings)
    made, skipped = [], Counter()
    for recording in corpus.recordings:
        result = recording_examples(recording, corpus.recipe_for(recording))
        made += result.examples
        skipped.update(result.skipped)
    ids = {e.question_id for e in made}
    assert skipped["skipped step (not performed)"] == 2
    assert skipped["next: a later step overlaps the prefix"] == 1  # 1_3: the second microwave starts early
    assert skipped["next: step performed again"] == 1  # 2_3 rinses twice
    assert skipped["prefix shorter than 5 s"] >= 1
    assert "1_1_-1_next" in ids and "1_1_-1_missing" not in ids  # START: next only
    assert "2_1_-1_next" not in ids  # the first step ends before 5 s
    # Repeated step texts map to the recipe's nodes in topological order (2 then 6, 5 then 7).
    cocoa = next(r for r in corpus.recordings if r.recording_id == "1_1")
    assert [s.step_id for s in cocoa.steps] == [-1, 1, 2, 3, 4, 5, 6, 7]
    # Modified descriptions stand for what the recording shows, with the errors.
    timing = next(e for e in made if e.question_id == "1_2_2_timing")
    assert timing.current_step["description"] == "Microwave-Microwave the mug for 90 seconds"
    assert timing.error_description == "Microwaved for 90 seconds instead of 30 seconds"
    assert timing.is_noisy and timing.previous_steps[0]["errors"][0]["tag"] == "Technique Error"  # the spill
    assert all(e.end_seconds >= 5 for e in made)


def test_missing_input_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no CaptainCook4D annotations"):
        load_captaincook(tmp_path)


def test_a_bad_recording_is_reported_and_the_others_load(sample_sources: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(sample_sources / "annotation_json", copy / "annotation_json")
    shutil.copytree(sample_sources / "task_graphs", copy / "task_graphs")
    path = copy / "annotation_json" / "error_annotations.json"
    records = json.loads(path.read_text())
    records[1]["step_annotations"][0]["start_time"] = "about a minute"
    path.write_text(json.dumps(records, indent=4))
    corpus = load_captaincook(copy)
    assert len(corpus.recordings) == 5
    [problem] = corpus.problems
    assert problem.path == path and problem.line > 1 and "about a minute" in problem.message


def _example(recording: str, kind: str, noisy: bool, targets: int, step: int = 1) -> Example:
    steps = [{"step_id": 9, "description": "x"}] * targets
    extra = {"next": {"next_steps": steps}, "missing": {"missing_steps": steps}}.get(
        kind, {"error_description": "an error"}
    )
    return Example(recording, "1", "A", f"{recording}_{step}", f"{recording}_{step}_{kind}", kind, 10.0,
                   [{"step_id": 1, "description": "p", "errors": [{"tag": "T", "description": "e"}]}] if noisy else [],
                   {"step_id": step, "description": "c"}, noisy, **extra)  # fmt: skip


def test_sampling_takes_one_per_recording_group_and_balances() -> None:
    examples = [
        _example(f"r{r}", "next", noisy, targets, step)
        for r in range(12)
        for step, (noisy, targets) in enumerate(
            [(True, 1), (True, 0), (False, 2), (False, 0), (False, 1)], start=1
        )
    ]
    examples.append(_example("r0", "next", False, 7, step=9))  # too many target steps
    result = sample_examples(examples, SamplingSettings(next=8, seed=3))
    cells = Counter((e.is_noisy, e.has_target) for e in result.samples)
    assert cells == {(True, True): 2, (True, False): 2, (False, True): 2, (False, False): 2}
    assert len({e.recording_id for e in result.samples if (e.is_noisy, e.has_target) == (False, True)}) == 2
    assert result.left_out["next"]["more than 5 target steps"] == 1
    assert result.left_out["next"]["one per recording and group"] == 12  # two clean-with-target per recording
    again = sample_examples(list(reversed(examples)), SamplingSettings(next=8, seed=3))
    assert [e.question_id for e in again.samples] == [e.question_id for e in result.samples]
    other = sample_examples(examples, SamplingSettings(next=8, seed=4))
    assert [e.question_id for e in other.samples] != [e.question_id for e in result.samples]


def test_sampling_moves_slack_to_the_other_side() -> None:
    examples = [_example(f"r{r}", "timing", r < 1, 1) for r in range(10)]  # 1 noisy, 9 clean
    result = sample_examples(examples, SamplingSettings(others=6))
    assert Counter(e.is_noisy for e in result.samples) == {True: 1, False: 5}


def test_a_reply_without_pairs_is_invalid_and_the_pick_is_seeded_by_the_item() -> None:
    with pytest.raises(InvalidReply, match="question"):
        usable_pairs("I would ask about the next step.")
    with pytest.raises(InvalidReply, match="followed by an answer"):
        usable_pairs("* What next?\n* What now?")
    pairs = usable_pairs("* **Q1?**\n    * A1.\n* Q2?\n* Q3?\n  * A3a.\n  * A3b.")
    assert pairs == [QAPair("Q1?", ("A1.",)), QAPair("Q2?", ()), QAPair("Q3?", ("A3a.", "A3b."))]
    picks = {pick_pair(pairs, f"item-{i}")[0] for i in range(40)}
    assert picks == {0, 2}  # never the pair without answers
    assert pick_pair(pairs, "item-1") == pick_pair(pairs, "item-1")
    index, _ = pick_pair(pairs, "item-1")
    assert released_qas(pairs, index)[0] == pairs[index].as_dict()


def test_end_time_is_truncated_like_the_official_format() -> None:
    assert hhmmss(473.9) == "00:07:53" and hhmmss(3725.2) == "01:02:05"
    assert PrefixRules().min_seconds == 5.0
