"""Constants of the recipe plug-in system, importable without loading any recipe."""

from __future__ import annotations

#: The entry-point group a package declares its recipes under (`NAME = "module:Class"`).
ENTRY_POINT_GROUP = "expvid.recipes"
#: The recipe `expvid build` runs without `--recipe`.
DEFAULT_RECIPE = "expvid"
#: The review pages the platform draws, by the kind a recipe declares (`Recipe.review_page`):
REVIEW_PAGES = {
    "levels": "the item's question, options and answer with its clip, editable (multiple choice, step "
    "lists, step numbers, fill-in blanks)",
    "timed-mcq": "a multiple-choice question whose times are buttons that play the video there, with "
    "the visual evidence and the paper excerpt beside it",
    "procedural": "a generated question with its machine answers and the recipe graph, judged by two "
    "annotators against the recipe's criteria",
}
