"""The ProMQA recipe's declarations (section 3 and appendix B of its paper), for the registry."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from expvid.construction.recipes.promqa.config import RELEASE_SUITE
from expvid.construction.recipes.promqa.parsing import DEFAULT_PARSER, PARSERS
from expvid.construction.recipes.promqa.prompting import DEFAULT_TEMPLATE
from expvid.recipes.api import (
    BuildRequest,
    BuiltRelease,
    Recipe,
    RecipeError,
    RecipeInput,
    RecipeJudge,
    RecipeSample,
    RecipeSetting,
    ReviewHooks,
)

_SAMPLE_MARKER = ".expvid-promqa-sources"


class ProMQARecipe(Recipe):
    """ProMQA: procedural questions from CaptainCook4D's annotated cooking recordings and recipe graphs."""

    name = "promqa"
    title = "ProMQA: procedural QA candidates from CaptainCook4D recordings and recipe graphs"
    paper = "ProMQA, section 3 and appendix B"
    inputs = (
        RecipeInput("annotation_json/", "CaptainCook4D's step and error annotations"),
        RecipeInput("task_graphs/", "CaptainCook4D's recipe graphs, one JSON per recipe"),
        RecipeInput("videos/ or resolution_*/", "the recordings (as the CaptainCook4D downloader lays them out)"),
    )  # fmt: skip
    stages = ("sampling", "generation", "candidates")
    settings = (
        RecipeSetting("template", str, DEFAULT_TEMPLATE, "prompt template(s), comma-separated (Table 6)"),
        RecipeSetting("generator", str, None, "another generator model spec, repeatable (Table 7)"),
        RecipeSetting("corrections", str, None, "hand corrections: promqa (the paper's) or a YAML file"),
        RecipeSetting("require_4k", bool, False, "keep only recordings published in 4K, as the paper did"),
        RecipeSetting("download_links", Path, None, "the downloader's metadata/download_links.json"),
        RecipeSetting("parser", str, DEFAULT_PARSER, "how replies are read", choices=PARSERS),
        RecipeSetting("next", int, 200, "examples wanted of the next type (B.1)", minimum=0),
        RecipeSetting("missing", int, 200, "examples wanted of the missing type (B.1)", minimum=0),
        RecipeSetting("others", int, 20, "examples wanted of each other type (B.1)", minimum=0),
        RecipeSetting("count.TYPE", int, None, "examples wanted of one type", minimum=0),
        RecipeSetting("sample", bool, True, "false keeps every example (a small corpus)"),
        RecipeSetting("max_answers", int, 5, "skip examples with more target steps", minimum=1),
        RecipeSetting("max_error_steps", int, 5, "skip examples with more erroneous steps", minimum=1),
        RecipeSetting("min_seconds", float, 5.0, "B.1's shortest recording prefix", minimum=0),
        RecipeSetting("overlap_margin", float, 2.0, "B.1's overlap margin in seconds", minimum=0),
        RecipeSetting("frames", int, 50, "frames of the video templates (1 fps, the last kept)", minimum=1),
        RecipeSetting("max_side", int, 1360, "longest side of those frames in pixels", minimum=1),
        RecipeSetting("price.N", str, None, "USD per 1M tokens IN,OUT of generator N (2, 3, ...)"),
        RecipeSetting("human_minutes_per_qa", float, 4.8, "Table 5's full-human minutes per QA", minimum=0),
        RecipeSetting("hourly_rate", float, 20.0, "USD per hour of a person (Table 5)", minimum=0),
        RecipeSetting("temperature", float, 0.7, "generation temperature (the official code's)", minimum=0),
        RecipeSetting("max_tokens", int, 512, "generation budget (the official code's)", minimum=1),
    )  # fmt: skip
    review_page = "procedural"
    #: The platform level of ProMQA's judged items (`review.judgements.PROCEDURAL_LEVEL`).
    review_level = 0
    review_templates = Path(__file__).resolve().parent / "review" / "templates"
    export_format = "promqa"
    release_suite = RELEASE_SUITE
    judges = (
        RecipeJudge("annotators", "two people judge every candidate; conflicts are adjudicated (B.3)"),
        RecipeJudge("LLM judge", "scores free-text answers of the release (expvid eval --suite promqa --judge)"),
    )  # fmt: skip
    docs = "build_promqa.md"

    def build(self, request: BuildRequest) -> BuiltRelease | None:
        from expvid.construction.recipes.promqa.command import run_promqa

        values: dict[str, Any] = dict(request.flags)
        return run_promqa(values)

    def review_hooks(self) -> ReviewHooks | None:
        from expvid.construction.recipes.promqa.review.hooks import ProMQAReviewHooks

        return ProMQAReviewHooks()

    def make_sample(self, directory: Path, seed: int, *, force: bool = False) -> RecipeSample:
        """CaptainCook4D-layout sources: annotations, recipe graphs and coded recordings."""
        from expvid.suites.promqa.sample_sources import write_sample_sources

        started = time.perf_counter()
        root = Path(directory).expanduser()
        if root.is_dir() and any(root.iterdir()):
            if not (root / _SAMPLE_MARKER).is_file():
                raise RecipeError(
                    f"refusing to write into {root}: it is not empty and holds no expvid sample"
                )
            if not force:
                raise RecipeError(f"{root} already holds a sample; pass --force to overwrite it")
            shutil.rmtree(root / "sources", ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        (root / _SAMPLE_MARKER).write_text(f"seed {seed}\n", encoding="utf-8")
        made = write_sample_sources(root / "sources", seed)
        return RecipeSample(
            sources=made.root,
            what=f"{made.recordings} coded recordings ({made.steps} annotated steps), recipe graphs",
            seconds=time.perf_counter() - started,
        )
