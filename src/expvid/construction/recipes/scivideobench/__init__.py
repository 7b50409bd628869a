"""The SciVideoBench recipe (`expvid build --recipe scivideobench`): section 2 of its paper as a tool.

Speech-to-text where a video has no transcript, then the multi-agent roles of section 2.2 (QA
generator guided by a replaceable exemplar set, evaluator, visual comparer, refiner), each a cached,
counted stage with its own prompt file (expvid's own: the paper does not publish them), ExpVid's
vision-centric audits, and output in SciVideoBench's published layout for the review platform and
`expvid eval --suite scivideobench`. See docs/scivideobench-recipe.md.
"""

from expvid.construction.recipes.scivideobench.config import QUESTION_TYPES, SvbBuildConfig
from expvid.construction.recipes.scivideobench.pipeline import build_scivideobench, estimate_scivideobench

__all__ = ["QUESTION_TYPES", "SvbBuildConfig", "build_scivideobench", "estimate_scivideobench"]
