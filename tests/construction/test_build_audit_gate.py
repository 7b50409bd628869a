"""The ExpVid recipe's sample build passes its own audit, with no exception file.

Before: the bundled sample drew step-ordering distractors whose medoid is the correct order, and
quantity distractors that left the true value in the middle (a learned text-only model read 54% of
the built sample's 82 quantity items); the narration names every Level-1 answer by construction, which
counts only where the model is shown it (`-S with_asr=true`)."""

from __future__ import annotations

from expvid.audit.gate import decide
from expvid.construction.release_gate import audit_build

LEVEL1 = ("tools", "materials", "quantity", "operation")


def test_the_sample_build_passes_the_audit_gate(sample_build) -> None:  # type: ignore[no-untyped-def]
    report = audit_build(sample_build.out, "expvid")
    verdict = decide(report)
    assert verdict.passed, [f.describe() for f in verdict.blocking]
    assert report.settings["transcript_shown"] is False and report.settings["embeddings"] is True
    informational = {(f.solver, f.task) for f in verdict.informational}
    assert {("transcript overlap", task) for task in LEVEL1} <= informational
    assert all(f.family == "transcript" for f in verdict.informational)
    tested = {(s.name, s.task): s for s in report.solvers}
    for task in ("quantity", "materials", "operation"):  # the learned model reads the options only
        assert not tested[("learned text-only model", task)].beats_chance, task
    ordering = [s for s in report.solvers if s.task == "sequence_ordering" and s.family == "ordering"]
    assert not ordering  # every ordering solver ties all four options of every rebuilt set: none applies
    assert len(report.items) == sample_build.report["total_items"]
