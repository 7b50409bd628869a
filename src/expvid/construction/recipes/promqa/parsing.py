"""Reading a generator's reply into question-answer pairs, and picking one (section 3.2).

The reply format is the prompt's list: `* question` lines, each followed by `    * answer` lines
(two to four spaces). The reading is the official `postprocess`: `**` (Markdown bold, which Gemini
added) is removed first; a question line is `* ` at the start of a line, its answers are the
indented `* ` lines right after it; any other line is ignored. `tests/construction_promqa` parses
all 401 released responses into exactly their released `qas` (as sets: the official code shuffles
the list twice with an unseeded generator, so its order cannot be reproduced; the released
`qas[0]` is the pair that was picked).

Departures, on purpose: a reply with no usable pair (no question with at least one answer) is an
invalid reply here, re-asked with feedback, where the official code stored `{"question": null}`;
and the pick (`l = 3` pairs generated, one kept at random) is drawn among pairs that have answers,
from a generator seeded by the item's own id, so the same item always keeps the same pair.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from expvid.construction.llm import InvalidReply

_PAIR = re.compile(r"\* (.*?)\n((?: {2,4}\* .*?\n)*)")
_ANSWER = re.compile(r" {2,4}\* (.*)")
#: Pairs the prompt asks for ("return three pairs of a question and its answers").
PAIRS_ASKED = 3


@dataclass(frozen=True)
class QAPair:
    question: str
    answers: tuple[str, ...]

    def as_dict(self) -> dict[str, object]:
        return {"question": self.question, "answers": list(self.answers)}


def parse_pairs(reply: str | None) -> list[QAPair]:
    """Every `* question` with its `* answer` lines, in reply order (the official reading)."""
    if not reply:
        return []
    text = reply.replace("**", "") + "\n"
    pairs = []
    for question, block in _PAIR.findall(text):
        answers = []
        for line in block.splitlines():
            found = _ANSWER.findall(line)
            if len(found) == 1:
                answers.append(found[0])
        pairs.append(QAPair(question, tuple(answers)))
    return pairs


def usable_pairs(reply: str | None) -> list[QAPair]:
    """The `parse` of a generation call: the pairs, or `InvalidReply` when none has an answer."""
    pairs = parse_pairs(reply)
    if not any(pair.question.strip() and pair.answers for pair in pairs):
        shape = (
            "no lines of the form '* question' followed by '    * answer'"
            if not pairs
            else ("no question is followed by an answer line ('    * answer')")
        )
        raise InvalidReply(
            f"the reply has {shape}; return the pairs as a list: '* <question>' lines, each followed by "
            "its answers as '    * <answer>' lines"
        )
    return pairs


def pick_pair(pairs: list[QAPair], key: str) -> tuple[int, QAPair]:
    """One pair with answers, uniformly at random from a generator seeded by `key` (the item id)."""
    candidates = [i for i, pair in enumerate(pairs) if pair.question.strip() and pair.answers]
    if not candidates:
        raise ValueError("no pair with answers to pick from")
    index = random.Random(f"promqa-pick:{key}").choice(candidates)
    return index, pairs[index]


def released_qas(pairs: list[QAPair], picked: int) -> list[dict[str, object]]:
    """`generation.qas` as the release stores it: the picked pair first, then the others in order."""
    order = [picked, *(i for i in range(len(pairs)) if i != picked)]
    return [pairs[i].as_dict() for i in order]
