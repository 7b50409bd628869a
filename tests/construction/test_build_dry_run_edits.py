"""`--dry-run` between batches sees what a transcript edit will cost (issue 29, section 3).

Batch 1 builds two experiments. Before batch 2 a person fixes one speech-to-text error (one cue of
one transcript) and adds a third experiment. The dry run must announce, stage by stage, at least
what the build then sends (curation exactly: the edited transcript is scored again), and after the
build, nothing.
"""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from build_helpers import build_config, run_build
from build_responder import ScriptedLab

from expvid.construction.llm import phase_of
from expvid.construction.pipeline import estimate_candidates
from expvid.fakes.models.server import LoopbackServer

STAGES = ("curation", "level1", "level2", "level3", "blind_audit")


def _sent(report: dict[str, Any]) -> Counter[str]:
    """Requests sent per stage, from the build report's per-prompt counts."""
    sent: Counter[str] = Counter()
    for key, counts in report["calls"]["by_stage"].items():
        sent[phase_of(key.split(":", 1)[1])] += counts["requests"]
    return sent


def _announced(sources: Path, out: Path, server: LoopbackServer) -> dict[str, int]:
    plan = asyncio.run(estimate_candidates(build_config(sources, out, server, blind_samples=1)))
    return {stage: plan["stages"][stage]["calls"] for stage in STAGES}


def _edit_one_cue(transcript: Path) -> None:
    """Correct one word of one cue, as a person fixing a speech-to-text error would."""
    lines = transcript.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(lines) if line and not line[0].isdigit() and " " in line)
    words = lines[index].split(" ")
    words[-1] = words[-1] + "s"
    lines[index] = " ".join(words)
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_dry_run_announces_what_a_transcript_edit_costs(sample_sources: Path, tmp_path: Path) -> None:
    sources = tmp_path / "sources"
    for video_id in ("61842", "66708"):
        shutil.copytree(sample_sources / video_id, sources / video_id)
    out = tmp_path / "out"
    with LoopbackServer(ScriptedLab()) as server:
        run_build(sources, out, server, blind_samples=1)
        assert sum(_announced(sources, out, server).values()) == 0  # a finished batch costs nothing more

        # Batch 2: one cue corrected, nothing else.
        _edit_one_cue(sources / "61842" / "transcript.srt")
        announced = _announced(sources, out, server)
        sent = _sent(run_build(sources, out, server, blind_samples=1))
        assert announced["curation"] == sent["curation"] == 1
        assert sent["level1"] > 0 and sent["level2"] > 0  # the edited sentence and its segment
        for stage in STAGES:
            assert announced[stage] >= sent[stage], (stage, announced, dict(sent))
        assert sum(announced.values()) <= 3 * sum(sent.values())  # a forecast, not the whole experiment again
        assert (sum(announced.values()), sum(sent.values())) == (17, 8)  # the figures docs/build.md quotes
        assert sum(_announced(sources, out, server).values()) == 0

        # Batch 3: a new experiment and another corrected cue.
        _edit_one_cue(sources / "66708" / "transcript.srt")
        shutil.copytree(sample_sources / "62517", sources / "62517")
        announced = _announced(sources, out, server)
        sent = _sent(run_build(sources, out, server, blind_samples=1))
        assert announced["curation"] == sent["curation"] == 2
        for stage in STAGES:
            assert announced[stage] >= sent[stage], (stage, announced, dict(sent))
