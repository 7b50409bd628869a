"""The section 3.1 curation rules on made-up collections: score rule, duration IQR or bounds, top K."""

from __future__ import annotations

from pathlib import Path

from expvid.construction.config import CurationSettings
from expvid.construction.context import LoadedExperiment
from expvid.construction.curation import curation_markdown, decide
from expvid.construction.drafts import StageOutput
from expvid.construction.sources import SourceExperiment
from expvid.media.info import VideoInfo

GOOD = {"continuity": 5, "alignment": 4.5, "clarity": 4.5, "integrity": 4, "focus": 4.5}


def experiment(video_id: str, duration: float, discipline: str = "Biology") -> LoadedExperiment:
    source = SourceExperiment(
        video_id, f"title {video_id}", discipline, Path(video_id), Path("v.mp4"), Path("t.srt"), None
    )
    info = VideoInfo(
        "v.mp4", "mp4", "h264", 64, 64, 64, 64, 0, 10, 1, 0.0, duration, duration, 10.0, False, "1/10", 1
    )
    return LoadedExperiment(source=source, info=info)


def scores(video_id: str, values: dict[str, float] | None = None, problem: str | None = None) -> StageOutput:
    output = StageOutput(video_id=video_id, stage="curation")
    if problem:
        output.problem(problem, transient=True)
    else:
        output.notes = {"scores": values or GOOD, "comment": None, "draft": {"stage": "transcript_quality"}}
    return output


def test_score_rule_mean_at_least_4_and_no_criterion_below_3_5():
    collection = [experiment("a", 100), experiment("b", 100), experiment("c", 100), experiment("d", 100)]
    scored = {
        "a": scores("a"),
        "b": scores("b", {**GOOD, "focus": 3.4}),  # mean 4.28 but one criterion below 3.5
        "c": scores("c", {k: 3.9 for k in GOOD}),  # no criterion below 3.5 but mean 3.9
        "d": scores("d", problem="transcript scoring failed: request failed: HTTP 500"),
    }
    report = decide(CurationSettings(min_duration=10, max_duration=1000), collection, scored)
    assert report.kept == ["a"]
    reasons = {e.video_id: e.reasons for e in report.entries}
    assert reasons["b"] == ["focus score 3.4 < 3.5"]
    assert reasons["c"] == ["mean transcript score 3.90 < 4"]
    assert reasons["d"] == ["transcript scoring failed: request failed: HTTP 500"]


def test_durations_outside_the_interquartile_range_are_rejected():
    durations = [100, 300, 378, 450, 500, 600, 728, 900]
    collection = [experiment(str(i), d) for i, d in enumerate(durations)]
    report = decide(CurationSettings(), collection, {str(i): scores(str(i)) for i in range(8)})
    assert report.duration_bounds is not None
    q1, q3 = report.duration_bounds
    assert (round(q1, 2), round(q3, 2)) == (358.5, 632.0)  # numpy's linear percentiles
    assert sorted(report.kept, key=int) == ["2", "3", "4", "5"]
    assert "duration 100.0 s outside interquartile range of 8 durations" in report.entry("0").reasons[0]
    assert report.warnings == []
    small = decide(CurationSettings(), collection[:4], {str(i): scores(str(i)) for i in range(4)})
    assert "keeps about half of them by construction" in small.warnings[0]


def test_ranking_keeps_the_top_k_per_discipline():
    collection = [experiment(f"b{i}", 100, "Biology") for i in range(4)] + [
        experiment("c0", 100, "Chemistry")
    ]
    scored = {f"b{i}": scores(f"b{i}", {**GOOD, "clarity": 4.0 + i * 0.2}) for i in range(4)}
    scored["c0"] = scores("c0", {k: 4.0 for k in GOOD})
    report = decide(CurationSettings(top_k=2, min_duration=10, max_duration=1000), collection, scored)
    assert sorted(report.kept) == ["b2", "b3", "c0"]  # best two biology, the only chemistry
    assert report.entry("b0").reasons == ["rank 4 in Biology is beyond the top 2"]
    assert report.entry("b3").rank == 1
    markdown = curation_markdown(report)
    assert (
        "| b3 | Biology | 100.0 |" in markdown
        and "rejected: rank 4 in Biology is beyond the top 2" in markdown
    )
