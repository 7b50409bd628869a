"""The ProMQA answer prompt, filled exactly as the official code fills it."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from expvid.schema import Item


@cache
def answer_template() -> str:
    return resources.files(__package__).joinpath("prompts", "answer.txt").read_text(encoding="utf-8")


def build_prompt(item: Item) -> str:
    """Official `get_text_content`: recipe, then activity name, then question replaced; stripped."""
    prompt = (
        answer_template()
        .replace("{recipe}", str(item.meta["recipe_dot"]))
        .replace("{activity_name}", str(item.meta["activity_name"]))
        .replace("{question}", item.question)
    )
    return prompt.strip()


@cache
def caption_rewrites() -> dict[str, str]:
    """Sentence of the answer prompt about images -> what a model given captions reads instead."""
    text = (
        resources.files(__package__).joinpath("prompts", "caption_rewrites.json").read_text(encoding="utf-8")
    )
    return {entry["sentence"]: entry["replacement"] for entry in json.loads(text)["rewrites"]}
