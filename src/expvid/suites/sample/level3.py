"""Level-3 drafts: fill-in-the-blank questions on the full (slide-trimmed) experiment video.

Question text follows appendix F.4: "Title: ...\\nDiscipline: ...\\nQuestion: ...". Blanks are
runs of underscores of varying length, as in the release (2 to 8 here), so a loader that only
recognises "_____" fails on this sample just as it would on the real files.
"""

from __future__ import annotations

import random

from expvid.suites.sample.layout import level3_video
from expvid.suites.sample.plan import ClipSpec, Draft, PlannedExperiment
from expvid.suites.sample.scripts import BLANK_MARK, BlankQuestion

BLANK_LENGTHS = (2, 3, 4, 5, 5, 6, 7, 8)


def level3_drafts(experiment: PlannedExperiment, seed: int) -> tuple[list[Draft], list[ClipSpec]]:
    script, timeline = experiment.script, experiment.timeline
    rng = random.Random(f"{seed}:{script.video_id}:level3")
    path = level3_video(script.video_id)
    all_steps = tuple(range(1, len(script.steps) + 1))
    clip = ClipSpec(path, script.video_id, "level_3", ((0, timeline.procedure_end),), all_steps)
    caption = experiment.narration(all_steps)
    drafts = [
        _draft(task, question, experiment, path, caption, rng)
        for task, questions in (
            ("experimental_conclusion", script.analysis),
            ("scientific_discovery", script.discovery),
        )
        for question in questions
    ]
    return drafts, [clip]


def _draft(
    task: str,
    question: BlankQuestion,
    experiment: PlannedExperiment,
    path: str,
    caption: str,
    rng: random.Random,
) -> Draft:
    text = question.text
    while BLANK_MARK in text:
        text = text.replace(BLANK_MARK, "_" * rng.choice(BLANK_LENGTHS), 1)
    script = experiment.script
    return Draft(
        task=task,
        video_path=path,
        question=f"Title: {script.title}\nDiscipline: {script.discipline}\nQuestion: {text}",
        asr_caption=caption,
        answer=list(question.answers),
        video_id=script.video_id,
        category=script.discipline,
    )
