"""ExpVid inference prompts, as printed in appendix F.4 of the paper (review version).

The full prompt is `{task_instruction}\\n\\n{question}`. The instructions live verbatim in
`prompts/expvid/*.txt`; this module only lays out the question block the way the F.4 examples show
it. Nothing from the item's file path ever enters the text, and the narration (`asr_caption`) is
added only for the explicit `with_asr` ablation.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from expvid.schema import AnswerType, Item

_PROMPT_DIR = "prompts/expvid"

#: Which instruction file each answer type uses (F.4 "Task Instruction" boxes).
_INSTRUCTION_FILES: dict[AnswerType, str] = {
    AnswerType.CHOICE: "instruction_mcq.txt",
    AnswerType.STEP_SEQUENCE: "instruction_sequence_generation.txt",
    AnswerType.STEP_NUMBER: "instruction_step_prediction.txt",
    AnswerType.BLANKS: "instruction_fill_in_blank.txt",
}

#: Header of the narration block in the `-S with_asr=true` ablation (ours; the paper gives no wording).
ASR_HEADER = "Narration transcript of this video (ASR):"


@cache
def task_instruction(answer_type: AnswerType) -> str:
    """The F.4 task instruction for an answer type, verbatim."""
    try:
        name = _INSTRUCTION_FILES[answer_type]
    except KeyError:
        raise ValueError(f"ExpVid has no instruction for answer type {answer_type.value!r}") from None
    return files("expvid.suites").joinpath(_PROMPT_DIR, name).read_text(encoding="utf-8").strip()


def format_options(options: dict[str, str]) -> str:
    """`A: text` lines in letter order; multi-line option texts (step lists) kept as written."""
    return "\n".join(f"{letter}: {text}" for letter, text in options.items())


def question_block(item: Item) -> str:
    """The question as F.4 lays it out for the item's level and task."""
    question = item.question
    if item.answer_type is AnswerType.CHOICE:
        if item.level == 1 and not question.lstrip().startswith("Question:"):
            question = f"Question: {question}"
        return f"{question}\n\nOptions:\n{format_options(item.options or {})}"
    return question


def build_prompt(item: Item, *, with_asr: bool = False) -> str:
    """The full text prompt for one ExpVid item (frames are sent separately, before it)."""
    parts = [task_instruction(item.answer_type)]
    if with_asr and item.context:
        parts.append(f"{ASR_HEADER}\n{item.context.strip()}")
    parts.append(question_block(item))
    return "\n\n".join(parts)
