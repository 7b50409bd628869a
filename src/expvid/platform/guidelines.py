"""Review guidelines shown beside each item, condensed from the ExpVid paper.

Sources: section 3.3 "Expert Verification" (per-level standards), appendix E "Criteria" (common to all
tasks) and the scoring guidelines visible in figures 11 and 13 (Level-1 and Level-3 interfaces).
"""

from __future__ import annotations

from expvid.platform.services.recipe_hooks import hooks_for_level, hooks_for_task, recipe_tasks
from expvid.platform.services.tasks import task_spec

#: Appendix E, "Criteria": unified across all tasks.
COMMON_CRITERIA = (
    "Video-grounded: the question must be solvable from the visual evidence in the video.",
    "No leakage or shortcuts: the stem must not reveal the answer; distractors must be scientifically plausible.",
    "Concrete, step-level fidelity: keep only visually verifiable actions; revise or remove abstract or "
    "unobservable descriptions.",
    "Consistent formatting and clarity: wording avoids unverifiable details; each question has a unique, "
    "unambiguous answer.",
    "Justified verification: give a reason for every decision, approvals included.",
)

LEVEL_GUIDELINES = {
    1: (
        "Check that the target (material, tool, quantity or operation) is visible or inferable in the clip; "
        "names may be recognised from on-screen text or from shape and colour.",
        "The question must be answerable from the video plus scientific common sense, not from common sense alone.",
        "Distractors must be scientifically plausible and visually confusable (same numeric range for "
        "quantities; plausible operations in the same setting).",
        "Do not mention materials or tools that do not exist in the experiment.",
        "The narration is an aid for you only: models never see it; the answer must come from the picture.",
    ),
    2: (
        "Check the step list against the segment: remove steps that are not observed, correct wrong start/end "
        "times, refine vague descriptions and add operations that are performed but missing.",
        "Keep the experiment's step order; the derived questions (ordering, sequence, prediction, "
        "completeness) are rebuilt from the list you verify.",
        "Only visually verifiable actions belong in the list.",
    ),
    3: (
        "Read the paper sections (Introduction, Results, Discussion) beside the full video.",
        "Fill-in-the-blank questions must need reasoning over the whole experiment and must not be answerable "
        "without the video.",
        "One precise answer per blank, minimising ambiguity and synonyms; prefer several blanks that capture "
        "several key points.",
        "Experimental analysis (Results/Discussion): the conclusion must be evident from the video or the "
        "experimental comparison. Scientific discovery (Introduction/Discussion): the purpose, significance "
        "or scientific background of the design.",
    ),
}

TASK_NOTES = {
    "materials": "Materials: the reagent, sample or substance handled in the clip.",
    "tools": "Tools: the instrument or piece of equipment used in the clip.",
    "quantity": "Quantity: the amount, volume or count shown; distractors in the same numeric range.",
    "operation": "Operation: the action performed; distractors plausible in the same experimental setting.",
    "sequence_ordering": "Step ordering: the correct option is the segment's steps in order; the others are "
    "plausible permutations.",
    "sequence_generation": "Sequence generation: the answer is the numbers of the steps performed in the clip.",
    "step_prediction": "Step prediction: the clip stops before the final step of the segment; the answer is "
    "that next step.",
    "video_verification": "Completeness verification: one non-final step was cut out of the clip; the answer "
    "is that step.",
    "experimental_conclusion": "Experimental analysis: blanks hold the conclusions drawn from the results.",
    "scientific_discovery": "Scientific discovery: blanks hold the significance or background of the work.",
}

PAPER_MINUTES = {1: "6-8", 2: "about 13", 3: "about 18"}


def guidelines_for(task: str) -> dict[str, object]:
    """The guidance beside an item of `task`: ExpVid's for its tasks, the declaring recipe's
    (`ReviewHooks.level_rules`, `ReviewTask.note`) for a recipe's own."""
    spec = task_spec(task)
    hooks = hooks_for_task(task) or hooks_for_level(spec.level)
    if hooks is not None:
        note = next((t.note for t in recipe_tasks() if t.name == task), "")
        rules, minutes = tuple(hooks.level_rules), hooks.paper_minutes
    else:
        note = TASK_NOTES.get(task, "")
        rules, minutes = LEVEL_GUIDELINES.get(spec.level, ()), PAPER_MINUTES.get(spec.level, "not reported")
    return {
        "title": spec.title,
        "level": spec.level,
        "note": note,
        "level_rules": rules,
        "common": COMMON_CRITERIA,
        "minutes": minutes,
    }
