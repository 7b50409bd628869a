"""The rules a question's text options must meet, in one place: when the QA generator writes them and
again when the refiner rewrites them.

Nine distractors, none a twin of the correct answer, no two twins of each other. What counts as a
twin is `twins` below: today the same text once case, spacing, surrounding quotes and final
punctuation are set aside ("Ethanol." and " ethanol" are one option). The validity audit's
near-duplicate check is meant to be plugged in here, and then holds at both places at once.
A problem is returned as text for the model (the reply is re-asked with it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from expvid.construction.recipes.scivideobench.numeric_options import N_OPTIONS

_SPACES = re.compile(r"\s+")
_EDGES = " \t\n\"'“”‘’`.,;:!?"

Twins = Callable[[str, str], bool]


def option_key(text: str) -> str:
    """The text as twins are compared (never for output)."""
    return _SPACES.sub(" ", text).strip(_EDGES).casefold()


def same_text(first: str, second: str) -> bool:
    return option_key(first) == option_key(second)


#: The twin test every option check uses (replace it here with the audit's near-duplicate check).
twins: Twins = same_text


def option_problems(answer: str, distractors: list[str]) -> list[str]:
    """What is wrong with `distractors` for `answer` (empty when nothing)."""
    problems = []
    if not option_key(answer):
        problems.append("the correct answer is empty")
    if len(distractors) != N_OPTIONS - 1:
        problems.append(f"give exactly {N_OPTIONS - 1} distractors, got {len(distractors)}")
    for index, text in enumerate(distractors, 1):
        if not option_key(text):
            problems.append(f"distractor {index} is empty")
        elif twins(text, answer):
            problems.append(f"distractor {index} ({text!r}) is the correct answer itself")
    for first in range(len(distractors)):
        for second in range(first + 1, len(distractors)):
            if option_key(distractors[first]) and twins(distractors[first], distractors[second]):
                problems.append(
                    f"distractors {first + 1} and {second + 1} are the same option ({distractors[second]!r})"
                )
    return problems
