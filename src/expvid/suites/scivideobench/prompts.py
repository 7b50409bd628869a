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

Settings (`-S KEY=VALUE`, `suite.SciVideoBenchSettings`): `cot` ("off" | "official" | "mmvu"),
`keep_times` (bool), `post_prompt` ("default" | "gpt4v" | "llava_vid"; not with `cot`, whose text
replaces it).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

from expvid.schema import Item
from expvid.suites.scivideobench.spec import COT_TEMPLATES, POST_PROMPTS
from expvid.suites.scivideobench.timestamps import times_to_frames


@cache
def prompt_file(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


def shown_question(item: Item, *, keep_times: bool = False) -> str:
    """The question text the model sees: rewritten to frame numbers unless `keep_times`."""
    if keep_times:
        return item.question
    return times_to_frames(item.question, float(item.meta["video_duration"]))


def format_options(options: dict[str, str], separator: str = ". ") -> str:
    """The official `format_options`: one "A. text" line per option, letters sorted."""
    return "\n".join(f"{letter}{separator}{options[letter]}" for letter in sorted(options))


def build_prompt(
    item: Item, *, cot: str = "off", post_prompt: str | None = None, keep_times: bool = False
) -> str:
    """The prompt text: `cot` "off" | "official" | "mmvu", the post prompt by model family (None:
    "default"), the question's mm:ss times kept as written (`keep_times`) or rewritten to frames."""
    question = shown_question(item, keep_times=keep_times)
    options = item.options or {}
    if cot == "mmvu":
        template = Template(prompt_file(COT_TEMPLATES["mmvu"]))
        return template.substitute(question=question, optionized_str=format_options(options, ": "))
    if cot == "official":
        return f"{question}\n{format_options(options)}\n{prompt_file(COT_TEMPLATES['official'])}"
    post = prompt_file(POST_PROMPTS[post_prompt or "default"])
    return f"{question}\n{format_options(options)}\n{post}"
