"""This recipe's tasks as the review platform lists them (light: no platform module is imported)."""

from __future__ import annotations

from expvid.recipes.api import ReviewTask

#: The platform level of SciVideoBench items (above ExpVid's 1-3).
SVB_LEVEL = 4
SVB_FILE = "scivideobench_1k.jsonl"

REVIEW_TASKS = (
    ReviewTask("conceptual", SVB_LEVEL, "Conceptual Reasoning", SVB_FILE, n_options=10,
               note="Conceptual reasoning: mechanisms, protocols and principles behind the operations shown."),
    ReviewTask("hypothetical", SVB_LEVEL, "Hypothetical Reasoning", SVB_FILE, n_options=10,
               note="Hypothetical reasoning: hypothesised errors, what-ifs and control logic of a critical operation."),
    ReviewTask("quantitative", SVB_LEVEL, "Quantitative Reasoning", SVB_FILE, n_options=10,
               note="Quantitative reasoning: every number the calculation needs must come from the video."),
)  # fmt: skip
