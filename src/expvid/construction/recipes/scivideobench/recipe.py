"""The SciVideoBench recipe's declarations (section 2 of its paper), for the registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from expvid.construction.recipes.scivideobench.config import QUESTION_TYPES, REDO_STAGES, RELEASE_SUITE
from expvid.construction.recipes.scivideobench.platform_tasks import REVIEW_TASKS, SVB_LEVEL
from expvid.construction.recipes.speech_settings import EXPERIMENT_INPUTS, SPEECH_SETTINGS
from expvid.recipes.api import (
    BuildRequest,
    BuiltRelease,
    Recipe,
    RecipeJudge,
    RecipeSample,
    RecipeSetting,
    ReviewHooks,
)


class SciVideoBenchRecipe(Recipe):
    """SciVideoBench: multi-agent questions (generator, evaluator, visual comparer, refiner)."""

    name = "scivideobench"
    title = "SciVideoBench: conceptual, hypothetical and quantitative questions by cooperating agents"
    paper = "SciVideoBench, section 2"
    inputs = EXPERIMENT_INPUTS
    stages = REDO_STAGES
    settings = (
        *SPEECH_SETTINGS,
        RecipeSetting(
            "per_type", str, ",".join(f"{kind}:2" for kind in QUESTION_TYPES),
            "questions asked per experiment and type (TYPE:N,...)",
        ),
        RecipeSetting("exemplars", Path, None, "the exemplar set that guides the generator (JSON)"),
        RecipeSetting("prompts", Path, None, "a folder of prompt files replacing the recipe's own"),
        RecipeSetting("frames", int, 16, "labelled frames the evaluator and comparer see", minimum=1),
        RecipeSetting("frame_max_side", int, 448, "longest side of those frames in pixels", minimum=1),
        RecipeSetting("paper_chars", int, 24000, "characters of the paper given to the agents", minimum=1),
        RecipeSetting("noise", float, 0.2, "Gaussian scale of quantitative distractors (x |answer|)"),
        RecipeSetting(
            "generator", str, "frames", "what the QA generator sees of the video", choices=("frames", "video", "text")
        ),
        RecipeSetting("disciplines", Path, None, "JSON {label: Biology|Chemistry|Medicine|Physics}"),
    )  # fmt: skip
    review_page = "timed-mcq"
    review_tasks = REVIEW_TASKS
    review_level = SVB_LEVEL
    review_templates = Path(__file__).resolve().parent / "templates"
    export_format = "expvid"
    release_suite = RELEASE_SUITE
    judges = (
        RecipeJudge("evaluator", "checks each draft against the video frames, transcript and paper"),
        RecipeJudge("visual comparer", "checks that the answer needs what the frames show"),
        RecipeJudge("blind audit", "a text-only model answers each item without the video (--blind-llm)"),
    )
    docs = "scivideobench-recipe.md"

    def build(self, request: BuildRequest) -> BuiltRelease | None:
        from expvid.construction.recipes.scivideobench.command import run_scivideobench

        values: dict[str, Any] = dict(request.flags)
        return run_scivideobench(values)

    def review_hooks(self) -> ReviewHooks | None:
        from expvid.construction.recipes.scivideobench.review import SciVideoBenchReviewHooks

        return SciVideoBenchReviewHooks()

    def make_sample(self, directory: Path, seed: int, *, force: bool = False) -> RecipeSample:
        from expvid.construction.recipes.expvid.recipe import speech_sample

        return speech_sample(directory, seed, force)
