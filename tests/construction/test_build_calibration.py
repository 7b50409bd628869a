"""Every audit calibrated on two scripted builds: one drafted clean, one drafted to leak in known ways.

The leaky lab (`Faults(leaky=True)`) leaks one known way per task: material questions quote the
narration, tool distractors are out of the domain, the correct operation is padded twice as long,
ordering distractors are single swaps of the correct order (its Kendall medoid; the clean build
rebuilds them, the leaky one keeps them), Level-3 answers are a title word or spoken in the narration.
Quantity, sequence generation, verification and prediction are drafted the same in both (controls).
Each audit's hit rate on the items built to leak its way and on the same tasks of the clean build is
printed (`pytest -s`) and asserted; the thresholds in `audits.py` must lie between the two score
distributions measured here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from build_helpers import read_jsonl, run_build, subset
from build_responder import Faults, ScriptedLab

from expvid.construction.audits import ASR_LEAK_MARGIN, asr_leakage_score
from expvid.fakes.models.server import LoopbackServer
from expvid.suites.expvid_suite import load_expvid

VIDEOS = ["61842", "63090", "65321"]  # biology, chemistry, medicine

#: audit -> the tasks its leak was built into (the leaky build) and compared on (the clean build).
CALIBRATION = {
    "asr_leakage": ("materials", "scientific_discovery"),
    "answer_in_question": ("experimental_conclusion",),
    "implausible_distractor": ("tools",),
    "length_bias": ("operation",),
    "ordering_shortcut": ("sequence_ordering",),
    "blind_answerable": ("operation",),
}


def _flags(out: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for line in read_jsonl(out / "provenance.jsonl"):
        found[line["item"]] = {flag["kind"] for flag in line["flags"]}
    return found


@pytest.fixture(scope="module")
def builds(sample_sources: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("calibration")
    sources = subset(sample_sources, root / "sources", VIDEOS)
    result: dict[str, Any] = {}
    for name, faults, repair in (("clean", Faults(), True), ("leaky", Faults(leaky=True), False)):
        with LoopbackServer(ScriptedLab(faults)) as server:
            run_build(
                sources, root / name, server, blind_samples=1, levels=(1, 2, 3), domain_audit=True,
                repair_ordering=repair,
            )  # fmt: skip
        result[name] = root / name
    yield result


def _hit_rate(flags: dict[str, set[str]], audit: str, tasks: tuple[str, ...]) -> tuple[int, int]:
    items = [key for key in flags if key.split("/")[0] in tasks]
    return sum(audit in flags[key] for key in items), len(items)


def test_each_audit_separates_items_built_to_leak_from_clean_ones(builds, capsys):
    clean, leaky = _flags(builds["clean"]), _flags(builds["leaky"])
    rows = []
    for audit, tasks in CALIBRATION.items():
        hit_leaky, n_leaky = _hit_rate(leaky, audit, tasks)
        hit_clean, n_clean = _hit_rate(clean, audit, tasks)
        rows.append((audit, hit_leaky, n_leaky, hit_clean, n_clean))
    with capsys.disabled():
        print("\naudit hit rates (items built to leak | clean items of the same tasks):")
        for audit, hl, nl, hc, nc in rows:
            print(
                f"  {audit:24s} leaky {hl:3d}/{nl:<3d} = {hl / max(1, nl):4.0%} | clean {hc:3d}/{nc:<3d} = {hc / max(1, nc):4.0%}"
            )
    for audit, hl, nl, hc, nc in rows:
        assert nl > 0 and nc > 0, audit
        assert hl / nl >= 0.9, (audit, hl, nl)
        # The lab's blind solver picks the longest option: on clean items it is right as often as the
        # correct option happens to be the longest (about one in four), and those items ARE answerable
        # without the video by that shortcut. The implausibility audit is lexical and flags a distractor
        # with ONE word out of context (so that "steering wheel" is caught beside a "filter wheel"):
        # in this three-experiment pilot no discipline has peers, the collection stands in, and
        # "hot plate", "vacuum oven", "tube furnace", "hydraulic press" use a word no transcript or
        # paper of the three uses (7 of 17 clean tool items). At ExpVid's size, with peers in every
        # discipline, none of the lab's own distractors is flagged (test_build_domain_audit.py).
        # Every other audit stays near 0.
        limit = {"blind_answerable": 0.3, "implausible_distractor": 0.45}.get(audit, 0.1)
        assert hc / nc <= limit, (audit, hc, nc)


def test_the_asr_threshold_lies_between_the_clean_and_the_leaky_scores(builds):
    def scores(out: Path) -> list[float]:
        dataset = load_expvid(out, strict=True)
        return [asr_leakage_score(item)[0] for item in dataset.items if item.task == "materials"]

    clean, leaky = scores(builds["clean"]), scores(builds["leaky"])
    assert max(clean) < ASR_LEAK_MARGIN <= min(leaky), (max(clean), min(leaky))


def test_implausible_distractors_carry_the_blind_audits_evidence(builds):
    flags = [
        flag["detail"]
        for line in read_jsonl(builds["leaky"] / "provenance.jsonl")
        for flag in line["flags"]
        if flag["kind"] == "implausible_distractor"
    ]
    assert flags and all("the text-only model chose it in" in detail for detail in flags)
    assert {"garden hose", "claw hammer", "steering wheel"} == {
        name
        for detail in flags
        for name in ("garden hose", "claw hammer", "steering wheel")
        if name in detail
    }
