"""A synthetic campaign of about 400 experiments for the scripted lab (benchmarks/campaign.py, tests).

ExpVid drafted 390 experiments; the bundled sample has six that curation keeps. This makes any number
of experiments out of them: experiment k is a replicate of one of the six protocols with its own id,
title, discipline (13 disciplines, at most 30 each, so the paper's top-30 rule keeps them all) and its
own narration (each step's narration begins "In replicate k: ..."), so every experiment's prompts are
its own and cost their own model calls, as real experiments do. The scripted lab of the tests answers
them (`ScriptedLab(scripts=...)`). The video is the protocol's sample video (a hard link, or a small
re-encode of it: cutting is not what a campaign benchmark measures), and the transcript is timed on
that video's timeline.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from expvid.suites.sample.scripts import ExperimentScript, load_scripts
from expvid.suites.sample.sources import paper_markdown, transcript_srt
from expvid.suites.sample.timeline import plan_timeline

DISCIPLINES = (
    "Biology", "Chemistry", "Medicine", "Neuroscience", "Bioengineering", "Immunology and Infection",
    "Cancer Research", "Developmental Biology", "Genetics", "Environment", "Engineering",
    "Biochemistry", "Behavior",
)  # fmt: skip


def replicate(base: ExperimentScript, k: int) -> ExperimentScript:
    """Protocol `base` as experiment number k (1-based): its own id, title, discipline and narration."""
    stages = tuple(
        dataclasses.replace(
            stage,
            steps=tuple(
                dataclasses.replace(step, narration=f"In replicate {k}: {step.narration}")
                for step in stage.steps
            ),
        )
        for stage in base.stages
    )
    return dataclasses.replace(
        base,
        video_id=f"{800000 + k}",
        title=f"{base.title} (Replicate {k})",
        discipline=DISCIPLINES[(k - 1) % len(DISCIPLINES)],
        stages=stages,
    )


def campaign_scripts(count: int) -> list[tuple[ExperimentScript, ExperimentScript]]:
    """(replicate, its base protocol) for experiments 1..count."""
    bases = [s for s in load_scripts() if s.kept]
    return [
        (replicate(bases[(k - 1) % len(bases)], k), bases[(k - 1) % len(bases)]) for k in range(1, count + 1)
    ]


def write_experiment(root: Path, script: ExperimentScript, base: ExperimentScript, videos: Path) -> Path:
    """`root/<id>/{video.mp4, transcript.srt, paper.md, meta.json}`; `videos/<base id>.mp4` is linked."""
    folder = root / script.video_id
    folder.mkdir(parents=True, exist_ok=True)
    timeline = plan_timeline(base, 0)  # the base video's timeline: the narration is timed on it
    (folder / "transcript.srt").write_text(transcript_srt(script, timeline), encoding="utf-8")
    (folder / "paper.md").write_text(paper_markdown(script), encoding="utf-8")
    meta = {"id": script.video_id, "title": script.title, "discipline": script.discipline}
    (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    video = folder / "video.mp4"
    if not video.exists():
        try:
            os.link(videos / f"{base.video_id}.mp4", video)
        except OSError:
            video.symlink_to(videos / f"{base.video_id}.mp4")
    return folder
