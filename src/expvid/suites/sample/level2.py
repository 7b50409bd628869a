"""Level-2 drafts: procedure understanding over stage-level segments (ExpVid 3.3).

- sequence_ordering: the segment's steps as a numbered list; distractors are the symmetric set the
  ExpVid recipe builds (`expvid.ordering.rebuild`: one adjacent swap, another disjoint
  one, and both; with three steps, a swap and the two reversals), so no solver comparing the options
  as orders beats chance. (The sample once drew two adjacent swaps and a reshuffle: the medoid of
  such a set is the correct order, 78% of the time on the sample's 18 items.)
- sequence_generation: the experiment's full step list in the question; the answer is the global
  numbers of the steps shown in the segment clip, as strings (as the release writes them).
- video_verification: the segment with one random NON-final step cut out; options map letters to
  the segment's local step numbers ("A": "1", ...); the clip name leaks the answer, as released.
- step_prediction: the segment with its final step cut out (only segments with >= 3 preceding
  steps); the answer is the removed step's global number, alternately an int and a numeric string.
"""

from __future__ import annotations

import random

from expvid.ordering.rebuild import rebuild
from expvid.schema import OPTION_LETTERS
from expvid.suites.sample.layout import prediction_clip, segment_clip, verification_clip
from expvid.suites.sample.plan import ClipSpec, Draft, PlannedExperiment, numbered
from expvid.suites.sample.timeline import FrameRange

ORDERING_QUESTION = "What is the correct sequence of steps shown in the video?"
GENERATION_QUESTION = "Based on the full step list, determine the step numbers shown in the video."
VERIFICATION_QUESTION = "Given the complete step list, which step was *not* performed in the video?"
PREDICTION_QUESTION = (
    "Given all steps of the experiment, please predict the next operation that will take place after "
    "this video segment."
)


def level2_drafts(
    experiment: PlannedExperiment, seed: int, prediction_index: int
) -> tuple[list[Draft], list[ClipSpec]]:
    """Drafts and clips for one experiment; `prediction_index` counts step-prediction items so far
    (even -> int answer, odd -> numeric string, so both shapes of the release are present)."""
    script, timeline = experiment.script, experiment.timeline
    rng = random.Random(f"{seed}:{script.video_id}:level2")
    texts = [step.text for step in script.steps]
    full_list = numbered(texts)
    drafts: list[Draft] = []
    clips: list[ClipSpec] = []

    for stage_number, numbers in enumerate(timeline.stage_steps, start=1):
        if len(numbers) < 3:
            continue
        path = segment_clip(script.video_id, stage_number)
        clips.append(
            ClipSpec(path, script.video_id, "segment", (timeline.stages[stage_number - 1],), numbers)
        )
        caption = experiment.narration(numbers)
        stage_texts = [texts[n - 1] for n in numbers]
        drafts.append(
            Draft(
                task="sequence_ordering",
                video_path=path,
                question=ORDERING_QUESTION,
                asr_caption=caption,
                correct=numbered(stage_texts),
                distractors=tuple(
                    numbered(p)
                    for p in _permutations(
                        stage_texts, random.Random(f"{seed}:{script.video_id}:ordering:{stage_number}")
                    )
                ),
                video_id=script.video_id,
                category=script.discipline,
            )
        )
        drafts.append(
            Draft(
                task="sequence_generation",
                video_path=path,
                question=f"{GENERATION_QUESTION}\nFull Step List:\n{full_list}",
                asr_caption=caption,
                answer=[str(n) for n in numbers],
                video_id=script.video_id,
                category=script.discipline,
            )
        )

    eligible = [s for s, numbers in enumerate(timeline.stage_steps, start=1) if 3 <= len(numbers) <= 10]
    if eligible:
        stage_number = rng.choice(eligible)
        numbers = timeline.stage_steps[stage_number - 1]
        local = rng.randrange(1, len(numbers))  # 1..n-1: never the final step
        removed_step = numbers[local - 1]
        shown = tuple(n for n in numbers if n != removed_step)
        path = verification_clip(script.video_id, stage_number, local)
        removed = timeline.steps[removed_step - 1]
        ranges = _without(timeline.stages[stage_number - 1], removed)
        clips.append(ClipSpec(path, script.video_id, "verification", ranges, shown, removed, removed_step))
        stage_texts = [texts[n - 1] for n in numbers]
        drafts.append(
            Draft(
                task="video_verification",
                video_path=path,
                question=f"{VERIFICATION_QUESTION}\nStep List:\n{numbered(stage_texts)}",
                asr_caption=experiment.narration(shown),
                options={OPTION_LETTERS[i]: str(i + 1) for i in range(len(numbers))},
                answer=OPTION_LETTERS[local - 1],
                video_id=script.video_id,
                category=script.discipline,
            )
        )

    eligible = [s for s, numbers in enumerate(timeline.stage_steps, start=1) if len(numbers) >= 4]
    if eligible:
        stage_number = rng.choice(eligible)
        numbers = timeline.stage_steps[stage_number - 1]
        removed_step, shown = numbers[-1], numbers[:-1]
        removed = timeline.steps[removed_step - 1]
        path = prediction_clip(script.video_id, stage_number)
        ranges = ((timeline.stages[stage_number - 1][0], removed[0]),)
        clips.append(ClipSpec(path, script.video_id, "prediction", ranges, shown, removed, removed_step))
        # The release's step-prediction lists lack the "1. " before the first step; keep that quirk.
        step_list = full_list.removeprefix("1. ")
        drafts.append(
            Draft(
                task="step_prediction",
                video_path=path,
                question=f"{PREDICTION_QUESTION}\nFull Step List:\n{step_list}",
                asr_caption=experiment.narration(shown),
                answer=removed_step if prediction_index % 2 == 0 else str(removed_step),
                video_id=script.video_id,
                category=script.discipline,
            )
        )
    return drafts, clips


def _permutations(texts: list[str], rng: random.Random) -> list[list[str]]:
    """Three distinct wrong orders forming a symmetric set with the correct one (module docstring)."""
    orders = rebuild(tuple(range(len(texts))), (), rng)
    if orders is None:
        raise ValueError(f"step ordering needs at least 3 steps, got {len(texts)}")
    return [[texts[i] for i in order] for order in orders]


def _without(stage: FrameRange, removed: FrameRange) -> tuple[FrameRange, ...]:
    parts = ((stage[0], removed[0]), (removed[1], stage[1]))
    return tuple(part for part in parts if part[1] > part[0])
