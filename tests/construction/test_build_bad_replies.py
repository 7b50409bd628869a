"""Bad model replies, served by a real loopback server, and what the pipeline does with each.

Malformed JSON, refusals and rule-breaking distractors are re-asked with the problem appended
(bounded); what is still bad is recorded and skipped. Timestamps that are not in the transcript are
snapped within the tolerance, rejected beyond it. Nothing crashes and nothing invalid is written.
"""

from __future__ import annotations

import pytest
from build_helpers import read_jsonl, run_build, subset
from build_responder import RETRY_MARK, Faults, ScriptedLab

from expvid.fakes.models.server import LoopbackServer
from expvid.suites.expvid_suite import load_expvid

VIDEO = "61842"
RECOVERABLE = {"materials", "tools", "segmentation", "steps", "ordering", "findings", "blanks"}


@pytest.fixture(scope="module")
def one_experiment(sample_sources, tmp_path_factory):
    return subset(sample_sources, tmp_path_factory.mktemp("one") / "sources", [VIDEO])


def _annotations(out):
    return {
        p.relative_to(out).as_posix(): p.read_text() for p in sorted((out / "annotations").rglob("*.jsonl"))
    }


def test_malformed_json_refusals_and_fenced_reasoning_are_retried_to_the_same_result(
    one_experiment, tmp_path
):
    with LoopbackServer(ScriptedLab()) as server:
        clean = run_build(one_experiment, tmp_path / "clean", server, blind_samples=0)
    faults = Faults(malformed_first=RECOVERABLE, refuse_first={"quantity", "alignment"}, think_and_fence=True)
    lab = ScriptedLab(faults)
    with LoopbackServer(lab) as server:
        report = run_build(one_experiment, tmp_path / "faulty", server, blind_samples=0)
        retried = [r for r in server.requests if RETRY_MARK in "\n".join(r.texts)]
    # Same items, byte for byte: every bad first reply was re-asked and the second one used.
    assert _annotations(tmp_path / "faulty") == _annotations(tmp_path / "clean")
    calls = report["calls"]
    assert calls["failures"] == 0 and report["problems"] == []
    assert calls["invalid_replies"] == calls["retries"] == len(retried) > 0
    assert calls["sent"] == clean["calls"]["sent"] + len(retried)
    by_stage = calls["by_stage"]
    assert by_stage["llm:g1_5_quantity_mcq"]["retries"] == by_stage["llm:g1_5_quantity_mcq"]["requests"] / 2
    # The retry shows the model its own reply and what was wrong with it.
    feedback = "\n".join(retried[0].texts)
    assert "could not be used" in feedback and ("refusal" in feedback or "does not parse" in feedback)
    provenance = read_jsonl(tmp_path / "faulty" / "provenance.jsonl")
    attempts = {d["prompt_id"]: d["attempts"] for p in provenance for d in p["drafts"]}
    assert attempts["g2_1_clip_segmentation"] == 2 and attempts["g1_5_quantity_mcq"] == 2
    assert attempts["g1_7_operation_mcq"] == 1


def test_a_model_that_always_refuses_costs_its_items_and_is_reported(one_experiment, tmp_path):
    lab = ScriptedLab(Faults(refuse_always={"operation_mcq", "segmentation"}))
    with LoopbackServer(lab) as server:
        report = run_build(one_experiment, tmp_path / "out", server, blind_samples=0, max_attempts=3)
    kept = {task: entry["kept"] for task, entry in report["items"].items()}
    assert kept["operation"] == 0 and kept["sequence_ordering"] == kept["video_verification"] == 0
    assert kept["materials"] > 0 and kept["quantity"] > 0 and kept["experimental_conclusion"] > 0
    messages = [p["message"] for p in report["problems"]]
    assert any(
        m.startswith("segmentation: no valid reply in 3 attempt(s)") and "refusal" in m for m in messages
    )
    assert (
        sum("g1_7_operation_mcq" in m for m in messages)
        == report["calls"]["by_stage"]["llm:g1_7_operation_mcq"]["failures"]
        > 0
    )
    assert lab.kinds["segmentation"] == 3  # bounded: three attempts, then give up
    assert load_expvid(tmp_path / "out", strict=True).items  # what was made is still valid


def test_timestamps_are_snapped_within_the_tolerance_and_rejected_beyond_it(one_experiment, tmp_path):
    lab = ScriptedLab(Faults(segment_shift={VIDEO: [0.3, 4.0, 0.0]}))
    with LoopbackServer(lab) as server:
        report = run_build(one_experiment, tmp_path / "out", server, blind_samples=0, levels=(2,))
    segments = read_jsonl(tmp_path / "out" / "segments.jsonl")
    assert [s["title"] for s in segments] == ["Coating the coverslips", "Live imaging"]
    assert report["items"]["segments"]["dropped"] == {"rejected segment": 1}
    (reason,) = report["notes"][f"{VIDEO}/level2"]["rejected_segments"]
    assert "segment 2 ('Passaging the colonies'): start_time 00:54.550 is not a timestamp" in reason
    assert reason in (tmp_path / "out" / "build_report.md").read_text()
    state = read_jsonl(tmp_path / "out" / "provenance.jsonl")
    snapped = {p["segment_id"] for p in state if any(f["kind"] == "snapped_timestamps" for f in p["flags"])}
    # Segment ids are content addresses of the segment's narration span, the same in every build.
    assert snapped == {segments[0]["segment_id"]} and segments[0]["segment_id"].startswith(f"{VIDEO}/seg-")
    detail = next(f["detail"] for p in state for f in p["flags"] if f["kind"] == "snapped_timestamps")
    assert "start_time 00:00.550 snapped to 00:00.250 (0.30 s)" in detail
    # The snapped segment starts on the real cue boundary (then padded back into the silence to 0).
    assert segments[0]["start"] == 0.0 and segments[0]["steps"][0]["start"] == 0.25


def test_a_segmentation_made_only_of_invented_times_is_re_asked_then_given_up(one_experiment, tmp_path):
    lab = ScriptedLab(Faults(invented_times={VIDEO}))
    with LoopbackServer(lab) as server:
        report = run_build(one_experiment, tmp_path / "out", server, blind_samples=0, levels=(2,))
    assert lab.kinds["segmentation"] == 3
    problem = report["problems"][0]
    assert problem["stage"] == "level2" and "no segment is usable" in problem["message"]
    assert "is not a timestamp of the transcript (nearest cue boundary" in problem["message"]
    assert report["total_items"] == 0


def test_ordering_distractors_must_be_permutations_of_the_same_steps(one_experiment, tmp_path):
    lab = ScriptedLab(Faults(bad_permutation="first"))
    with LoopbackServer(lab) as server:
        fixed = run_build(one_experiment, tmp_path / "first", server, blind_samples=0, levels=(2,))
    stage = fixed["calls"]["by_stage"]["llm:g2_3_sequence_ordering_mcq"]
    assert stage["invalid_replies"] == stage["retries"] == 3 and stage["failures"] == 0
    assert fixed["items"]["sequence_ordering"]["kept"] == 3
    for record in read_jsonl(tmp_path / "first" / "annotations/level2/sequence_ordering.jsonl"):
        assert all("biohazard" not in option for option in record["options"].values())

    lab = ScriptedLab(Faults(bad_permutation="always"))
    with LoopbackServer(lab) as server:
        stuck = run_build(one_experiment, tmp_path / "always", server, blind_samples=0, levels=(2,))
    assert stuck["items"]["sequence_ordering"]["kept"] == 0
    assert stuck["items"]["sequence_generation"]["kept"] == 3  # the segment's other items survive
    message = stuck["problems"][0]["message"]
    assert "option C contains a step that is not in the list" in message
