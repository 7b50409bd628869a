"""SFE prompts (appendix D), laid out as SFE's `construct_prompt` lays them out."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from expvid.schema import Item

_OPTION_LETTER = re.compile(r"^\s*\(?([A-J])\s*[).:：]")


@cache
def prompt_file(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


def build_prompt(item: Item, *, box_prompt: str = "paper") -> str:
    """`"{description}\\n{type sentence}\\n\\n{question}"`, then the options for multiple choice.

    Box items (E011, E012) get appendix D's bounding-box sentence (`box_prompt="paper"`), or the
    sentence of their question type, exact match, as SFE's own lmms-eval task sends (`"official"`).
    """
    description = prompt_file("description.txt").replace("{field}", str(item.meta["field"]))
    kind = str(item.meta["question_type"])
    if item.task == "grounding" and box_prompt == "paper":
        kind = "grounding"
    text = f"{description}\n{prompt_file(f'{kind}.txt')}\n\n{item.question}"
    if kind == "mcq":
        text = f"{text}\n" + "\n".join(item.meta.get("options", []))
    return text


def option_letters(options: list[str]) -> dict[str, str] | None:
    """{letter: option text} when every option starts with its letter ("A: ...", "(B) ..."), else None."""
    parsed: dict[str, str] = {}
    for option in options:
        match = _OPTION_LETTER.match(option)
        if match is None or match.group(1) in parsed:
            return None
        parsed[match.group(1)] = option[match.end() :].strip()
    return parsed or None
