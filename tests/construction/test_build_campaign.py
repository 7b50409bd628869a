"""A paid curation campaign: never pay twice, retry exactly what failed, redo on request, exit non-zero.

Every build here runs against the scripted lab on a real loopback server; what the server received is
the truth about what would have been paid for.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from build_helpers import bodies, run_build, subset
from build_responder import KINDS, Faults, ScriptedLab
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer

VIDEO = ["61842"]


def _kinds(server: LoopbackServer) -> Counter[str]:
    found: Counter[str] = Counter()
    for request in server.requests:
        text = "\n".join(request.texts)
        found[next((k for k, phrase in KINDS if phrase in text), "unknown")] += 1
    return found


@pytest.fixture()
def one(sample_sources: Path, tmp_path: Path) -> Path:
    return subset(sample_sources, tmp_path / "sources", VIDEO)


def test_resuming_against_another_port_sends_nothing_already_answered(one, tmp_path):
    out = tmp_path / "out"
    with LoopbackServer(ScriptedLab()) as first:
        report = run_build(one, out, first, blind_samples=1)
        answered = len(first.requests)
    assert report["failed_units"] == [] and answered > 100
    # A killed run keeps its answered calls in the cache but has not saved its stages.
    shutil.rmtree(out / ".build" / "stages")
    with LoopbackServer(ScriptedLab()) as moved:  # the same model, restarted on a new port
        assert moved.openai_base_url != first.openai_base_url
        again = run_build(one, out, moved, blind_samples=1)
        assert bodies(moved) == []
    assert again["calls"]["sent"] == 0 and again["calls"]["cache_hits"] >= answered
    assert again["total_items"] == report["total_items"]


def test_failed_units_are_asked_again_and_only_they(one, tmp_path):
    out = tmp_path / "out"
    with LoopbackServer(ScriptedLab(Faults(refuse_always={"quantity"}))) as refusing:
        first = run_build(one, out, refusing, blind_samples=1, levels=(1,))
        refused = _kinds(refusing)["quantity"]
    failed = first["failed_units"]
    assert failed and all("g1_5_quantity_mcq" in unit["message"] for unit in failed)
    assert first["items"]["quantity"]["kept"] == 0
    assert "Failed units" in (out / "build_report.md").read_text()
    n_units = len(failed)
    assert refused == 3 * n_units  # every unit used its three attempts

    # --keep-failed replays the cached refusals: nothing is paid, the failures stay.
    with LoopbackServer(ScriptedLab()) as healthy:
        kept = run_build(one, out, healthy, blind_samples=1, retry_failed=False, levels=(1,))
        assert bodies(healthy) == []
    assert len(kept["failed_units"]) == n_units

    # The default asks exactly the failed units again (a new cache round), and the model now answers.
    with LoopbackServer(ScriptedLab()) as healthy:
        second = run_build(one, out, healthy, blind_samples=1, levels=(1,))
        kinds = _kinds(healthy)
    assert kinds["quantity"] == n_units
    assert set(kinds) == {"quantity", "blind"}  # plus the blind audit of the new quantity items only
    assert kinds["blind"] == second["items"]["quantity"]["kept"] > 0
    assert second["failed_units"] == []

    # Nothing failed any more: a third run asks nothing.
    with LoopbackServer(ScriptedLab()) as idle:
        run_build(one, out, idle, blind_samples=1, levels=(1,))
        assert bodies(idle) == []


def test_redo_drafts_a_stage_again_with_fresh_requests(one, tmp_path):
    out = tmp_path / "out"
    with LoopbackServer(ScriptedLab()) as server:
        run_build(one, out, server, blind_samples=1, levels=(3,))
        server.reset()
        report = run_build(one, out, server, blind_samples=1, redo=("level3",), levels=(3,))
        kinds = _kinds(server)
        server.reset()
        run_build(one, out, server, blind_samples=1, redo=(), levels=(3,))
        after = len(server.requests)
    # Only Level 3's two prompts were asked again (the same drafts come back, so the blind audit of
    # their items is answered from the cache); the redo is done once, not on every later run.
    assert set(kinds) == {"findings", "blanks"} and kinds["findings"] == 1
    assert report["phases"]["level3"]["calls_sent"] == 2
    assert after == 0


def test_the_command_exits_non_zero_after_writing_everything_when_units_failed(one, tmp_path):
    out = tmp_path / "out"
    with LoopbackServer(ScriptedLab(Faults(refuse_always={"tools"}))) as server:
        result = CliRunner().invoke(
            app,
            ["build", str(one), "--out", str(out), "--llm", f"openai:r1@{server.openai_base_url}",
             "--min-duration", "60", "--max-duration", "900", "--preset", "ultrafast", "--blind-samples", "0",
             "--max-retries", "0", "--jobs", "1", "--levels", "1", "--quiet"],
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "unit(s) failed" in result.output and "Run the same command again" in result.output
    report = json.loads((out / "build_report.json").read_text())
    assert report["failed_units"] and report["total_items"] > 0
    assert (out / "annotations" / "level1" / "materials.jsonl").is_file()


def test_the_report_has_per_stage_time_calls_tokens_and_the_clip_pass(sample_build):
    report = sample_build.report
    phases = report["phases"]
    assert {"curation", "level1", "level2", "level3", "clips", "blind_audit"} <= set(phases)
    for name in ("curation", "level1", "level2", "level3", "blind_audit"):
        assert phases[name]["calls_sent"] > 0 and phases[name]["prompt_tokens"] > 0
        assert phases[name]["wall_seconds"] is not None
    assert sum(p["calls_sent"] for p in phases.values()) == report["calls"]["sent"]
    # The blind audit of a stage's items starts as soon as they exist, while other experiments draft.
    drafting_ends = max(phases[name]["ends_at_s"] for name in ("level1", "level2", "level3"))
    assert phases["blind_audit"]["starts_at_s"] < drafting_ends
    clips = report["clips"]
    # One ordered decode pass per video: no frame decoded twice (seeks skip the unused stretches).
    assert 0 < clips["decode_passes"] <= 1.0
    assert all(v["decoded_frames"] <= v["video_frames"] for v in clips["per_video"].values())
    assert clips["worker_seconds"] > 0 and clips["wall_seconds"] > 0 and clips["jobs"] >= 1
    # No "speed-up" from summed worker seconds: the real ratio is the benchmark's, against --jobs 1.
    assert "speedup" not in clips
    assert "benchmarks/build_clips.py" in (sample_build.out / "build_report.md").read_text()


def test_ordering_distractors_of_the_sample_no_longer_give_the_order_away(sample_build):
    lines = [
        json.loads(line)
        for line in (sample_build.out / "provenance.jsonl").read_text().splitlines()
        if '"sequence_ordering"' in line
    ]
    assert len(lines) == 18
    # The lab drafts single swaps (the correct order is their medoid) for every segment; every set was
    # rebuilt, and the audit finds no shortcut left.
    assert all("medoid" in line["meta"]["distractors_rebuilt"] for line in lines)
    assert not any(flag["kind"] == "ordering_shortcut" for line in lines for flag in line["flags"])
