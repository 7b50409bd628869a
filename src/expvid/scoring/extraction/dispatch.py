"""`extract_answer`: one entry point that picks the extractor for the item's answer type."""

from __future__ import annotations

from collections.abc import Callable

from expvid.schema import AnswerType, Item
from expvid.scoring.extraction.blanks import extract_blanks
from expvid.scoring.extraction.boxes import extract_boxes
from expvid.scoring.extraction.choice import extract_choice
from expvid.scoring.extraction.reasoning import split_reasoning
from expvid.scoring.extraction.steps import extract_step_number, extract_step_sequence
from expvid.scoring.extraction.types import Extraction


def _free_text(text: str, item: Item) -> Extraction:
    return Extraction.found(text, "reply_without_reasoning")


_EXTRACTORS: dict[AnswerType, Callable[[str, Item], Extraction]] = {
    AnswerType.CHOICE: extract_choice,
    AnswerType.STEP_NUMBER: extract_step_number,
    AnswerType.STEP_SEQUENCE: extract_step_sequence,
    AnswerType.BLANKS: extract_blanks,
    AnswerType.FREE_TEXT: _free_text,
    AnswerType.BOXES: extract_boxes,
}


def extract_answer(response: str | None, item: Item) -> Extraction:
    """The answer in `response` in the shape `item.answer_type` asks for.

    FAILED when there is no response at all (the request failed); UNPARSEABLE when a response came
    back but holds no valid answer - including a reply that is only reasoning. Reasoning blocks
    are removed first, so a tentative answer inside `<think>` never counts.
    """
    reply = extract_reply_text(response)
    return _EXTRACTORS[item.answer_type](reply.value, item) if reply.ok else reply


def extract_reply_text(response: str | None) -> Extraction:
    """The reply's answer text, think blocks removed (what a judge is shown as "the answer"), with the
    same failure rules as `extract_answer`: FAILED without a response, UNPARSEABLE when only reasoning."""
    if response is None:
        return Extraction.failed()
    answer, reasoning = split_reasoning(response)
    if not answer:
        why = "the reply holds only reasoning (no text after the think block)" if reasoning else "empty reply"
        return Extraction.unparseable(why)
    return Extraction.found(answer, "reply_without_reasoning")
