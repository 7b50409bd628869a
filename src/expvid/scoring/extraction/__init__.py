"""Answer extraction: from a model's reply to a value of the item's answer type, or an honest failure."""

from expvid.scoring.extraction.blanks import extract_blanks, split_blanks
from expvid.scoring.extraction.boxes import extract_boxes, parse_boxes
from expvid.scoring.extraction.choice import extract_choice
from expvid.scoring.extraction.dispatch import extract_answer, extract_reply_text
from expvid.scoring.extraction.latex import clean_answer_text, find_boxed, last_boxed, latex_to_text
from expvid.scoring.extraction.reasoning import split_reasoning
from expvid.scoring.extraction.steps import (
    candidate_steps,
    extract_step_number,
    extract_step_sequence,
    parse_step_list,
    step_numbers_in_question,
)
from expvid.scoring.extraction.types import Extraction

__all__ = [
    "Extraction",
    "candidate_steps",
    "clean_answer_text",
    "extract_answer",
    "extract_blanks",
    "extract_boxes",
    "extract_choice",
    "extract_reply_text",
    "extract_step_number",
    "extract_step_sequence",
    "find_boxed",
    "last_boxed",
    "latex_to_text",
    "parse_boxes",
    "parse_step_list",
    "split_blanks",
    "split_reasoning",
    "step_numbers_in_question",
]
