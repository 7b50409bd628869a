"""ExpVid 3.1 curation: transcript quality scores, the score rule, duration bounds, top K per discipline.

1. An LLM rates each transcript 0-5 on continuity, alignment, clarity, integrity and focus
   (`prompts/transcript_quality.*`, the criteria quoted from 3.1).
2. Kept only when the mean is at least 4 and no criterion is below 3.5.
3. Kept only when the duration lies in the collection's interquartile range (25th-75th percentile of
   the durations of every experiment whose video could be probed; by construction that keeps about
   half of a collection), or inside explicit bounds when given.
4. A person's review (`curation.csv`, `review.py`) excludes experiments or keeps them anyway; the
   duration rule is computed before reviews apply, so they never move it.
5. Ranked by mean score within each discipline (ties by id); the top K are kept. An experiment kept
   without its video on disk (curation needs only the transcript and a duration) is listed as
   `needs_video` and drafted once the video is there.

Every rejected experiment gets every reason that applies (not only the first), and the report shows
measured evidence beside the LLM's scores: the longest stretch without narration and where the
transcript ends relative to the video, so a reviewer can check a low continuity or alignment score.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from expvid.construction.config import BuildConfig, CurationSettings
from expvid.construction.context import BuildContext, LoadedExperiment
from expvid.construction.drafts import StageOutput
from expvid.construction.llm import DraftFailure, json_parser
from expvid.construction.prompts import load_prompt
from expvid.construction.review import COLUMNS, CRITERIA, Review
from expvid.construction.schemas import TranscriptScores
from expvid.construction.state import write_atomic
from expvid.construction.timeline import format_time, timestamped_lines
from expvid.models.spec import model_identity

STAGE = "curation"
PROMPT_ID = "transcript_quality"


class CurationEntry(BaseModel):
    video_id: str
    title: str
    discipline: str
    duration: float | None = None
    scores: dict[str, float] | None = None
    mean: float | None = None
    comment: str | None = None
    measured: dict[str, float] = Field(default_factory=dict)
    rank: int | None = None
    kept: bool = False
    #: Kept by the rules, but its video is not on disk: drafted once it is.
    needs_video: bool = False
    review: str = ""
    note: str = ""
    reasons: list[str] = Field(default_factory=list)
    drafts: list[dict[str, Any]] = Field(default_factory=list)


class CurationReport(BaseModel):
    duration_bounds: tuple[float, float] | None = None
    duration_rule: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    entries: list[CurationEntry] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    @property
    def kept(self) -> list[str]:
        return [e.video_id for e in self.entries if e.kept]

    @property
    def videos_needed(self) -> list[str]:
        return [e.video_id for e in self.entries if e.needs_video]

    def by_id(self) -> dict[str, CurationEntry]:
        return {e.video_id: e for e in self.entries}

    def entry(self, video_id: str) -> CurationEntry:
        """One experiment's entry (for a few look-ups; loops use `by_id`)."""
        return self.by_id()[video_id]


def measured_evidence(experiment: LoadedExperiment) -> dict[str, float]:
    """Longest silence (start, between cues, end) and the transcript's end vs the video's."""
    if experiment.transcript is None or not experiment.transcript.cues:
        return {}
    cues = experiment.transcript.cues
    gaps = [cues[0].start] + [b.start - a.end for a, b in itertools.pairwise(cues)]
    evidence = {"longest_gap_s": round(max(gaps), 3), "transcript_end_s": round(experiment.transcript.end, 3)}
    if experiment.duration is not None:
        evidence["video_duration_s"] = round(experiment.duration, 3)
        end = experiment.video_end if experiment.info is not None else experiment.duration
        evidence["tail_without_narration_s"] = round(max(0.0, end - experiment.transcript.end), 3)
    return evidence


def fingerprint(config: BuildConfig, experiment: LoadedExperiment) -> str:
    """What a saved score is valid for: the prompt, the transcript and paper (their content), the
    experiment's title, discipline and duration, and the model (the build and `--dry-run` both ask)."""
    duration = None if experiment.duration is None else f"{experiment.duration:.1f}"
    return config.fingerprint(
        STAGE, load_prompt(PROMPT_ID).sha256, experiment.text_stamp, experiment.source.title,
        experiment.source.discipline, duration, model_identity(config.llm),
    )  # fmt: skip


def prompt_values(experiment: LoadedExperiment) -> dict[str, str]:
    """The transcript-quality prompt's values for one experiment (the build's and the dry run's)."""
    transcript = experiment.transcript
    assert transcript is not None and experiment.duration is not None
    return {
        "title": experiment.source.title,
        "discipline": experiment.source.discipline,
        "video_duration": f"{format_time(experiment.duration)} ({experiment.duration:.1f} s)",
        "n_cues": str(len(transcript.cues)),
        "timestamped_transcript": timestamped_lines(transcript.cues),
    }


async def score_transcript(context: BuildContext, experiment: LoadedExperiment) -> StageOutput:
    """The LLM's five scores for one transcript (reused from the state directory when unchanged)."""
    key = fingerprint(context.config, experiment)
    output, reused = context.state.resume(experiment.video_id, STAGE, key)
    if reused:
        context.progress.advance(STAGE)
        return output
    values = prompt_values(experiment)
    try:
        async with context.calls:
            with context.clock.running(STAGE):
                drafted = await context.llm.ask_prompt(PROMPT_ID, values, json_parser(TranscriptScores))
    except DraftFailure as failure:
        output.problem(
            f"transcript scoring failed: {failure.message}", transient=failure.transient, failed=True
        )
    else:
        scores = drafted.value
        output.notes = {"scores": scores.criteria(), "comment": scores.comment, "draft": drafted.provenance()}
    context.state.save(output)
    context.progress.advance(STAGE)
    return output


def _bounds(
    experiments: list[LoadedExperiment], settings: CurationSettings
) -> tuple[tuple[float, float] | None, str]:
    if settings.min_duration is not None or settings.max_duration is not None:
        low = settings.min_duration if settings.min_duration is not None else 0.0
        high = settings.max_duration if settings.max_duration is not None else float("inf")
        return (low, high), f"given bounds [{low:g}, {high:g}] s"
    durations = [e.duration for e in experiments if e.duration is not None]
    if not durations:
        return None, "no video could be probed"
    q1, q3 = (float(v) for v in np.percentile(durations, [25, 75]))
    return (q1, q3), f"interquartile range of {len(durations)} durations: [{q1:.1f}, {q3:.1f}] s"


def decide(
    settings: CurationSettings,
    experiments: list[LoadedExperiment],
    scored: dict[str, StageOutput],
    reviews: dict[str, Review] | None = None,
) -> CurationReport:
    """Apply the 3.1 rules to the scores and the reviews; every experiment gets kept=True or its reasons."""
    reviews = reviews or {}
    bounds, rule = _bounds(experiments, settings)  # before any review: reviews never move the IQR
    report = CurationReport(duration_bounds=bounds, duration_rule=rule, settings=settings.model_dump())
    if bounds is not None and settings.min_duration is None and settings.max_duration is None:
        n = sum(e.duration is not None for e in experiments)
        if n < 8:
            report.warnings.append(
                f"the interquartile range of only {n} durations keeps about half of them by construction; "
                "give --min-duration/--max-duration for a small collection"
            )
    passing: dict[str, list[CurationEntry]] = defaultdict(list)
    forced: list[CurationEntry] = []
    for experiment in experiments:
        source = experiment.source
        review = reviews.get(experiment.video_id, Review(""))
        entry = CurationEntry(
            video_id=experiment.video_id,
            title=source.title,
            discipline=source.discipline,
            duration=None if experiment.duration is None else round(experiment.duration, 3),
            measured=measured_evidence(experiment),
            review=review.decision,
            note=review.note,
        )
        report.entries.append(entry)
        entry.reasons.extend(experiment.problems)
        blocking = bool(experiment.problems)
        output = scored.get(experiment.video_id)
        if output is not None:
            entry.reasons.extend(p.message for p in output.problems)
            if "scores" in output.notes:
                entry.scores = {k: float(v) for k, v in output.notes["scores"].items()}
                entry.mean = round(sum(entry.scores.values()) / len(entry.scores), 3)
                entry.comment = output.notes.get("comment")
                entry.drafts = [output.notes["draft"]]
        if entry.scores is not None and entry.mean is not None:
            if entry.mean < settings.min_mean:
                entry.reasons.append(f"mean transcript score {entry.mean:.2f} < {settings.min_mean:g}")
            low = {k: v for k, v in entry.scores.items() if v < settings.min_criterion}
            for name, value in low.items():
                entry.reasons.append(f"{name} score {value:g} < {settings.min_criterion:g}")
        elif not entry.reasons:
            entry.reasons.append("transcript was not scored")
        if bounds is not None and entry.duration is not None and not bounds[0] <= entry.duration <= bounds[1]:
            entry.reasons.append(f"duration {entry.duration:.1f} s outside {rule}")
        if review.decision == "exclude":
            entry.reasons.append("excluded by review" + (f" ({review.note})" if review.note else ""))
        elif review.decision == "keep" and not blocking:
            forced.append(entry)
        elif not entry.reasons:
            passing[entry.discipline].append(entry)
    for discipline, entries in passing.items():
        entries.sort(key=lambda e: (-(e.mean or 0.0), e.video_id))
        for rank, entry in enumerate(entries, start=1):
            entry.rank = rank
            if rank <= settings.top_k:
                entry.kept = True
            else:
                entry.reasons.append(f"rank {rank} in {discipline} is beyond the top {settings.top_k}")
    for entry in forced:
        overridden = "; ".join(entry.reasons)
        entry.reasons = []
        entry.kept = True
        entry.note = entry.note or (
            f"kept by review despite: {overridden}" if overridden else "kept by review"
        )
    videos = {e.video_id: e.source.video for e in experiments}
    for entry in report.entries:
        if entry.kept and videos.get(entry.video_id) is None:
            entry.kept = False
            entry.needs_video = True
            entry.reasons.append("kept, but its video is not on disk: add it to the folder and run again")
    return report


def curation_markdown(report: CurationReport) -> str:
    """The curation report for people: what was kept, and why each rejected experiment was rejected."""
    lines = ["# Curation report", "", f"Duration rule: {report.duration_rule}.", ""]
    s = report.settings
    lines.append(
        f"Score rule (ExpVid 3.1): mean >= {s.get('min_mean')}, every criterion >= {s.get('min_criterion')}; "
        f"top {s.get('top_k')} per discipline."
    )
    lines += [""] + [f"- warning: {w}" for w in report.warnings] + ([""] if report.warnings else [])
    lines += [
        "| video | discipline | duration (s) | cont. | align. | clar. | integ. | focus | mean | rank | decision |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for e in report.entries:
        sc = e.scores or {}
        cells = [
            f"{sc[k]:g}" if k in sc else "-"
            for k in ("continuity", "alignment", "clarity", "integrity", "focus")
        ]
        decision = "kept" if e.kept else "rejected: " + "; ".join(e.reasons)
        if e.needs_video:
            decision = "kept, needs its video"
        if e.review:
            decision += f" (review: {e.review}{'; ' + e.note if e.note else ''})"
        duration = f"{e.duration:.1f}" if e.duration is not None else "-"
        mean = f"{e.mean:.2f}" if e.mean is not None else "-"
        lines.append(
            f"| {e.video_id} | {e.discipline or '-'} | {duration} | {' | '.join(cells)} | {mean} | "
            f"{e.rank or '-'} | {decision} |"
        )
    lines += ["", "Measured evidence (not used in the decision):", ""]
    for e in report.entries:
        if e.measured:
            facts = ", ".join(f"{k} {v:g}" for k, v in e.measured.items())
            lines.append(f"- {e.video_id}: {facts}" + (f"; LLM comment: {e.comment}" if e.comment else ""))
    return "\n".join(lines) + "\n"


def write_review_csv(path: Path, report: CurationReport, reviews: dict[str, Review]) -> None:
    """Rewrite curation.csv from `report`, keeping every row's `review` and `note` (also for
    experiments no longer in the sources, so nothing a person wrote is lost)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    seen: set[str] = set()
    for entry in report.entries:
        seen.add(entry.video_id)
        scores = entry.scores or {}
        review = reviews.get(entry.video_id, Review(""))
        writer.writerow(
            {
                "video_id": entry.video_id,
                "title": entry.title,
                "discipline": entry.discipline,
                "duration_s": "" if entry.duration is None else f"{entry.duration:.1f}",
                **{name: (f"{scores[name]:g}" if name in scores else "") for name in CRITERIA},
                "mean": "" if entry.mean is None else f"{entry.mean:.2f}",
                "rank": entry.rank or "",
                "decision": "keep" if entry.kept or entry.needs_video else "reject",
                "reasons": "; ".join(entry.reasons),
                "longest_gap_s": entry.measured.get("longest_gap_s", ""),
                "tail_without_narration_s": entry.measured.get("tail_without_narration_s", ""),
                "review": review.decision,
                "note": review.note,
            }
        )
    for video_id, review in sorted(reviews.items()):
        if video_id not in seen and (review.decision or review.note):
            writer.writerow({"video_id": video_id, "review": review.decision, "note": review.note})
    write_atomic(path, buffer.getvalue())
