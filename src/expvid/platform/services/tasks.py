"""The tasks of the review platform and what kind of answer each one has: ExpVid's ten as its
release lays them out, and the tasks the installed recipes declare (`services.recipe_hooks`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from expvid.platform.services.recipe_hooks import recipe_tasks

AnswerKind = Literal["mcq", "step_list", "step_number", "blanks"] | str


@dataclass(frozen=True)
class TaskSpec:
    name: str
    level: int
    kind: AnswerKind
    #: The paper's name for the task (the release's file names differ for two of them).
    title: str
    #: Exact number of options for MCQ tasks, or None when it varies (completeness verification: 3-10).
    n_options: int | None = None
    #: Where a recipe's own task keeps its records in a candidate directory (None: the ExpVid layout).
    file: str | None = None


TASKS: dict[str, TaskSpec] = {
    spec.name: spec
    for spec in (
        TaskSpec("materials", 1, "mcq", "Materials", 4),
        TaskSpec("tools", 1, "mcq", "Tools", 4),
        TaskSpec("quantity", 1, "mcq", "Quantity", 4),
        TaskSpec("operation", 1, "mcq", "Operation", 4),
        TaskSpec("sequence_ordering", 2, "mcq", "Step Ordering", 4),
        TaskSpec("sequence_generation", 2, "step_list", "Sequence Generation"),
        TaskSpec("step_prediction", 2, "step_number", "Step Prediction"),
        TaskSpec("video_verification", 2, "mcq", "Completeness Verification"),
        TaskSpec("experimental_conclusion", 3, "blanks", "Experimental Analysis"),
        TaskSpec("scientific_discovery", 3, "blanks", "Scientific Discovery"),
    )
}
#: The recipes' own tasks (each recipe's at a level of its own, above ExpVid's 1-3).
TASKS.update(
    {
        task.name: TaskSpec(task.name, task.level, task.kind, task.title, task.n_options, task.file)
        for task in recipe_tasks()
        if task.name not in TASKS
    }
)

LEVEL3_TASKS = tuple(name for name, spec in TASKS.items() if spec.level == 3)


def task_spec(task: str) -> TaskSpec:
    try:
        return TASKS[task]
    except KeyError:
        raise KeyError(f"unknown ExpVid task {task!r}; expected one of {sorted(TASKS)}") from None


def annotation_file(root: Path, task: str) -> Path:
    """`DIR/annotations/level{n}/{task}.jsonl` (candidates_format.md), or the file a recipe declares."""
    spec = task_spec(task)
    if spec.file is not None:
        return root / spec.file
    return root / "annotations" / f"level{task_spec(task).level}" / f"{task}.jsonl"
