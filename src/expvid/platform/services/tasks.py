"""The ten ExpVid tasks as the release lays them out, and what kind of answer each one has."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

AnswerKind = Literal["mcq", "step_list", "step_number", "blanks"]


@dataclass(frozen=True)
class TaskSpec:
    name: str
    level: int
    kind: AnswerKind
    #: The paper's name for the task (the release's file names differ for two of them).
    title: str
    #: Exact number of options for MCQ tasks, or None when it varies (completeness verification: 3-10).
    n_options: int | None = None


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
        # SciVideoBench candidates (`expvid build --recipe scivideobench`): "level" 4 marks the suite
        TaskSpec("conceptual", 4, "mcq", "Conceptual Reasoning", 10),
        TaskSpec("hypothetical", 4, "mcq", "Hypothetical Reasoning", 10),
        TaskSpec("quantitative", 4, "mcq", "Quantitative Reasoning", 10),
    )
}

LEVEL3_TASKS = tuple(name for name, spec in TASKS.items() if spec.level == 3)


def task_spec(task: str) -> TaskSpec:
    try:
        return TASKS[task]
    except KeyError:
        raise KeyError(f"unknown ExpVid task {task!r}; expected one of {sorted(TASKS)}") from None


def annotation_file(root: Path, task: str) -> Path:
    """`DIR/annotations/level{n}/{task}.jsonl` (candidates_format.md); SciVideoBench's one question file."""
    if task_spec(task).level == 4:
        return root / "scivideobench_1k.jsonl"
    return root / "annotations" / f"level{task_spec(task).level}" / f"{task}.jsonl"
