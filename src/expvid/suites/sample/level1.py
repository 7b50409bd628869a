"""Level-1 drafts (tools, materials, quantity, operation): four-option MCQs on one step's clip.

Per ExpVid 3.3, the target comes from the step (its tool, material, quantity or operation) and
the distractors are plausible confusions: other tools/materials/operations of the same experiment
plus authored near-misses, and for quantities nearby values in the same unit.
"""

from __future__ import annotations

import random

from expvid.suites.sample.layout import level1_clip
from expvid.suites.sample.plan import ClipSpec, Draft, PlannedExperiment
from expvid.suites.sample.quantities import quantity_question
from expvid.suites.sample.quantity_distractors import quantity_distractors
from expvid.suites.sample.scripts import StepScript

LEVEL1_TASKS = ("tools", "materials", "quantity", "operation")
#: Steps per experiment that get a Level-1 clip, and items per task per experiment.
CLIP_STEPS = 5
ITEMS_PER_TASK = 3

_TOOL_QUESTIONS = (
    "Which tool is being used in this experimental step?",
    "What laboratory tool is being used in this research step?",
)
_MATERIAL_QUESTIONS = (
    "Which material appears in this experimental step?",
    "What material appears in this process?",
)
_OPERATION_QUESTIONS = (
    "What is the person doing with the {tool} in this step?",
    "In this step，what is being done with the {tool}?",
)


def level1_drafts(experiment: PlannedExperiment, seed: int) -> tuple[list[Draft], list[ClipSpec]]:
    script, timeline = experiment.script, experiment.timeline
    rng = random.Random(f"{seed}:{script.video_id}:level1")
    steps = script.steps
    chosen = sorted(rng.sample(range(1, len(steps) + 1), k=min(CLIP_STEPS, len(steps))))
    clips = [
        ClipSpec(
            path=level1_clip(script.video_id, number),
            video_id=script.video_id,
            kind="level_1",
            ranges=(timeline.steps[number - 1],),
            steps=(number,),
        )
        for number in chosen
    ]
    pools = {
        "tools": _pool([s.tool for s in steps], script.distractor_tools),
        "materials": _pool([s.material for s in steps], script.distractor_materials),
        "operation": _pool([s.operation for s in steps], script.distractor_operations),
    }
    drafts: list[Draft] = []
    for task in LEVEL1_TASKS:
        for number in sorted(rng.sample(chosen, k=min(ITEMS_PER_TASK, len(chosen)))):
            step = steps[number - 1]
            question, correct, distractors = _target(task, step, pools, rng)
            drafts.append(
                Draft(
                    task=task,
                    video_path=level1_clip(script.video_id, number),
                    question=question,
                    asr_caption=step.narration,
                    video_id=script.video_id,
                    category=script.discipline,
                    correct=correct,
                    distractors=tuple(distractors),
                )
            )
    return drafts, clips


def _target(
    task: str, step: StepScript, pools: dict[str, list[str]], rng: random.Random
) -> tuple[str, str, list[str]]:
    if task == "quantity":
        question = quantity_question(step.quantity, step.material, step.quantity_question)
        return question, step.quantity, quantity_distractors(step.quantity, rng)
    if task == "tools":
        question, correct = rng.choice(_TOOL_QUESTIONS), step.tool
    elif task == "materials":
        question, correct = rng.choice(_MATERIAL_QUESTIONS), step.material
    else:
        question, correct = rng.choice(_OPERATION_QUESTIONS).format(tool=step.tool), step.operation
    candidates = [text for text in pools[task] if text.casefold() != correct.casefold()]
    return question, correct, rng.sample(candidates, k=3)


def _pool(own: list[str], extra: tuple[str, ...]) -> list[str]:
    """Distinct candidates in first-seen order (deterministic, unlike a set)."""
    return list(dict.fromkeys([*own, *extra]))
