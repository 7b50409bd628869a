"""SciVideoBench's official answer extraction, reproduced as an explicitly named mode.

The official lmms-eval task (`scivideobench/utils.py`, `extract_answer_letter` and
`scivideobench_process_results`) reads a reply like this, quirks included:

1. strip the reply, then delete every occurrence of the prefixes "The answer is", "The correct
   answer is", "The best answer is", "Answer:", "Option:", "### Final Answer:\\n$$\\boxed" and
   "the final answer is" (case-sensitive, anywhere in the text);
2. if what is left has more than 16 words and no capital A-J anywhere, there is no answer;
3. otherwise the answer is the FIRST capital letter A-L anywhere in the text - so "I think the
   answer is B" gives "I", and "K"/"L" can come out although there are only ten options;
4. no letter at all -> a random letter A-J (`random.choice`, unseeded in the original).

Here step 4 is seeded per (seed, item id), so re-scoring a run gives the same guesses, and every
guess is marked (rule `official_random_fallback`) so reports can count them. The run's strict
extraction (`expvid.scoring.extraction.extract_choice`) never guesses; reports show both.
A request that failed is still a failure here: the official code would have "extracted" a letter
from lmms-eval's failure placeholder, which is not an answer a model gave.
"""

from __future__ import annotations

import hashlib
import random
import re

from expvid.schema import Item
from expvid.scoring.extraction.types import Extraction

#: The prefixes the official code deletes, in its order.
OFFICIAL_PREFIXES: tuple[str, ...] = (
    "The answer is",
    "The correct answer is",
    "The best answer is",
    "Answer:",
    "Option:",
    "### Final Answer:\n$$\\boxed",
    "the final answer is",
)
#: Letters the random fallback draws from (the ten options).
OFFICIAL_CHOICES: tuple[str, ...] = tuple("ABCDEFGHIJ")
_ANY_OPTION_LETTER = re.compile("[ABCDEFGHIJ]")
_FIRST_LETTER = re.compile(r"[ABCDEFGHIJKL]")
MODE_NAME = "official"


def official_letter(reply: str) -> str:
    """The letter the official code reads from `reply`, or "" when it finds none (port, quirks kept)."""
    text = reply.strip()
    for prefix in OFFICIAL_PREFIXES:
        text = text.replace(prefix, "")
    if len(text.split()) > 16 and not _ANY_OPTION_LETTER.search(text):
        return ""
    match = _FIRST_LETTER.search(text)
    return match[0] if match else ""


def fallback_letter(item_id: str, seed: int = 0) -> str:
    """The seeded stand-in for the official `random.choice`: same (seed, item) -> same letter."""
    digest = hashlib.sha256(f"scivideobench-official\x00{seed}\x00{item_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).choice(OFFICIAL_CHOICES)


def extract_official(response: str | None, item: Item, seed: int = 0) -> Extraction:
    """The official extraction of `response` for `item`; guesses are marked, failures stay failures."""
    if response is None:
        return Extraction.failed()
    letter = official_letter(response)
    if letter:
        return Extraction.found(letter, "official_first_capital")
    guess = fallback_letter(item.id, seed)
    return Extraction.found(
        guess,
        "official_random_fallback",
        detail=f"no letter found; the official code guesses at random (seeded guess: {guess})",
    )


def is_guess(extraction: Extraction) -> bool:
    return extraction.rule == "official_random_fallback"
