"""Explicit answer statements: "The answer is X", "Answer: X", "Final answer: X".

Used only when a reply has no `\\boxed{}`. The statement must be explicit; the text after it is
handed back for the caller to validate against the item (a letter among the options, a step
number in the list), so this module never decides what counts as an answer on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LEAD = re.compile(
    r"(?:\bfinal\s+answer|\bcorrect\s+(?:answer|option|choice)|\bbest\s+(?:answer|option|choice)"
    r"|\bright\s+(?:answer|option|choice)|\banswer)"
    r"(?:\s+to\s+(?:the|this)\s+question)?"
    r"\s*(?:is\b|would\s+be\b|should\s+be\b|will\s+be\b|[:：=])\s*[:：]?\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnswerPhrase:
    """One explicit answer statement: `rest` is the text after the lead, up to the end of its line."""

    start: int
    lead: str
    rest: str


def answer_phrases(text: str) -> list[AnswerPhrase]:
    """Every explicit answer statement in reading order (callers usually want the last valid one)."""
    phrases = []
    for match in _LEAD.finditer(text):
        end_of_line = text.find("\n", match.end())
        rest = text[match.end() : end_of_line if end_of_line >= 0 else len(text)]
        if not rest.strip() and end_of_line >= 0:  # "Answer:\nB" -> the answer is on the next line
            following = text[end_of_line + 1 :].lstrip("\n")
            next_break = following.find("\n")
            rest = following[: next_break if next_break >= 0 else len(following)]
        phrases.append(AnswerPhrase(start=match.start(), lead=match.group(0), rest=rest))
    return phrases
