"""QA generation: one call per example, template and generator; three pairs asked, one kept (3.2).

Each call goes through the build's `LLMClient` (cached by request, re-asked with feedback when the
reply has no usable pair, counted and priced per generator). The request is what the official code
sent: one user message holding the prompt text, then (video templates) the prefix's frames at 1 fps,
thinned from the end to `frames` with the last one kept, or (image templates) the recipe graph as
a PNG. The kept pair is drawn at random among the parsed pairs with answers, from a generator
seeded by the item's id (`parsing.pick_pair`), so re-running never changes which pair an item has.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from expvid.construction.llm import Drafted, DraftFailure, LLMClient
from expvid.construction.recipes.promqa.examples import Example
from expvid.construction.recipes.promqa.graph import RecipeGraph
from expvid.construction.recipes.promqa.graph_render import recipe_png
from expvid.construction.recipes.promqa.parsing import (
    DEFAULT_PARSER,
    QAPair,
    pick_pair,
    released_qas,
    usable_pairs,
)
from expvid.construction.recipes.promqa.prompting import (
    generation_prompt,
    template_sha256,
    uses_frames,
    uses_recipe_image,
)
from expvid.media.cache import FrameCache
from expvid.models.spec import model_id
from expvid.models.types import ImagePart, Message, TextPart

PHASE = "generation"


@dataclass(frozen=True)
class Unit:
    """One generation: an example under a template, asked of one generator."""

    example: Example
    template: str
    generator: str
    #: The generator's model name (as the release's `model_id` writes it).
    model: str
    role: str
    #: The item's id: ProMQA's `question_id`, plus template and model when a build asks several.
    question_id: str


@dataclass
class Generated:
    unit: Unit
    prompt: str
    drafted: Drafted[list[QAPair]]
    picked: int
    model_id: str

    @property
    def pair(self) -> QAPair:
        return self.drafted.value[self.picked]

    def generation_record(self) -> dict[str, Any]:
        """The release's `generation` object."""
        return {
            "prompt": self.prompt,
            "response": self.drafted.raw_response,
            "model_id": self.model_id,
            "template_type": self.unit.template,
            "qas": released_qas(self.drafted.value, self.picked),
        }


async def _frames(video: Path, end: float, frames: int, max_side: int, cache: FrameCache) -> list[ImagePart]:
    from expvid.media.sampler import sample_video

    sampled = await asyncio.to_thread(
        sample_video,
        video,
        fps=1.0,
        max_frames=frames,
        thinning="keep_last",
        start=0.0,
        end=end,
        size=None,
        max_side=max_side,
        image_format="png",
        cache=cache,
        workers=1,
    )
    return [ImagePart(data=f.data, mime=f.mime) for f in sampled.frames]


async def generate(
    unit: Unit,
    recipe: RecipeGraph,
    client: LLMClient,
    *,
    video: Path | None,
    frames: int,
    max_side: int,
    frame_cache: FrameCache,
    parser: str = DEFAULT_PARSER,
) -> Generated:
    """Ask `client` for the pairs of `unit` and keep one; `DraftFailure` when no usable reply came."""
    record = unit.example.record()
    prompt = generation_prompt(record, recipe, unit.template)
    images: list[ImagePart] = []
    if uses_recipe_image(unit.template):
        images.append(ImagePart(data=recipe_png(recipe), mime="image/png"))
    if uses_frames(unit.template):
        if video is None:
            raise DraftFailure(PHASE, unit.template, "no recording to take frames from", transient=False)
        images += await _frames(video, unit.example.end_seconds, frames, max_side, frame_cache)
    messages = [Message(role="user", content=[TextPart(text=prompt), *images])]
    drafted = await client.ask(
        messages,
        functools.partial(usable_pairs, mode=parser),
        prompt_id=f"promqa_generation:{unit.template}",
        prompt_sha256=template_sha256(unit.template),
        stage=f"{PHASE}:{unit.template}",
        phase=PHASE,
    )
    picked, _ = pick_pair(drafted.value, unit.question_id)
    return Generated(
        unit=unit, prompt=prompt, drafted=drafted, picked=picked, model_id=model_id(client.model)
    )
