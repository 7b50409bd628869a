"""SciVideoBench prompts: the official direct prompt, its per-model post prompts, and the CoT variants.

Direct (official `scivideobench_doc_to_text`): `f"{pre_prompt}{question}\\n{options}\\n{post_prompt}"`
with an empty pre prompt, the question after the mm:ss -> "frame N" rewrite, options as "A. text"
lines in letter order, and the default post prompt "\\nAnswer with the option's letter from the
given choices directly." (so the text ends "...\\n\\nAnswer with ...").

Chain of thought (§3.8):
- `cot` / `cot=official` (default): the same layout with the task file's `post_prompt_cot` in place
  of the post prompt ("... Conclude by stating the final answer using the following format:
  “Therefore, the final answer is: $LETTER” ..."). The official `doc_to_text` never reads that key,
  so this is how the shipped text is meant to be used; strict extraction reads the "Therefore, the
  final answer is: X" statement.
- `cot=mmvu`: MMVU's multiple-choice CoT template ("following the methodology in [61]"), options
  as "A: text" lines, the same rewritten question.

Variant switches (`PromptOptions.variant`): `cot` (true | "official" | "mmvu"), `keep_times` (bool),
`post_prompt` ("default" | "gpt4v" | "llava_vid"; not with `cot`, whose text replaces it).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template
from typing import Any

from expvid.schema import Item
from expvid.suites.scivideobench.spec import COT_TEMPLATES, POST_PROMPTS
from expvid.suites.scivideobench.timestamps import times_to_frames

VARIANT_KEYS = ("cot", "keep_times", "post_prompt")


@cache
def prompt_file(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


def cot_template(variant: dict[str, Any]) -> str | None:
    """The CoT template name a variant asks for (None: the direct prompt)."""
    value = variant.get("cot", False)
    if value is False or value is None:
        return None
    return "official" if value is True else str(value)


def check_variant(variant: dict[str, Any]) -> None:
    unknown = sorted(set(variant) - set(VARIANT_KEYS))
    if unknown:
        raise ValueError(
            f"unknown SciVideoBench prompt variant(s) {unknown}; known: {', '.join(VARIANT_KEYS)}"
        )
    post = variant.get("post_prompt", "default")
    if post not in POST_PROMPTS:
        raise ValueError(f"post_prompt {post!r}: expected one of {', '.join(POST_PROMPTS)}")
    cot = cot_template(variant)
    if cot is not None and cot not in COT_TEMPLATES:
        raise ValueError(f"cot={cot!r}: expected cot (the task's post_prompt_cot) or cot=mmvu")
    if cot is not None and "post_prompt" in variant:
        raise ValueError("cot replaces the post prompt; give cot or post_prompt, not both")


def shown_question(item: Item, *, keep_times: bool = False) -> str:
    """The question text the model sees: rewritten to frame numbers unless `keep_times`."""
    if keep_times:
        return item.question
    return times_to_frames(item.question, float(item.meta["video_duration"]))


def format_options(options: dict[str, str], separator: str = ". ") -> str:
    """The official `format_options`: one "A. text" line per option, letters sorted."""
    return "\n".join(f"{letter}{separator}{options[letter]}" for letter in sorted(options))


def build_prompt(item: Item, variant: dict[str, Any] | None = None) -> str:
    variant = variant or {}
    check_variant(variant)
    question = shown_question(item, keep_times=bool(variant.get("keep_times", False)))
    options = item.options or {}
    cot = cot_template(variant)
    if cot == "mmvu":
        template = Template(prompt_file(COT_TEMPLATES["mmvu"]))
        return template.substitute(question=question, optionized_str=format_options(options, ": "))
    if cot == "official":
        return f"{question}\n{format_options(options)}\n{prompt_file(COT_TEMPLATES['official'])}"
    post = prompt_file(POST_PROMPTS[str(variant.get("post_prompt", "default"))])
    return f"{question}\n{format_options(options)}\n{post}"
