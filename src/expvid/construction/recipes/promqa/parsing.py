"""Reading a generator's reply into question-answer pairs, and picking one (section 3.2).

The reply format is the prompt's list: `* question` lines, each followed by `    * answer` lines
(two to four spaces). Two readers (`-R parser=`):

- `tolerant` (the default, `tolerant_reader.py`): the same pairs from the replies models really
  write (CRLF, tabs, other bullets, tags, quotes, fenced blocks, a preamble or closing remark),
  never copying markup into the text; pairs are trimmed.
- `official`: the official `postprocess`, kept to rebuild the release: `**` (Markdown bold, which
  Gemini added) is removed first; a question line is `* ` at the start of a line, its answers are
  the `* ` lines indented by 2-4 spaces right after it; any other line is ignored. It reads all 401
  released responses into exactly their released `qas` (as sets: the official code shuffles the list
  twice with an unseeded generator, so its order cannot be reproduced; the released `qas[0]` is the
  pair that was picked). On anything else it is brittle: `\r` stays on every line, a tab-indented
  answer becomes a question, `- ` bullets give nothing and `[question]` tags are copied into the text.

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
from expvid.construction.recipes.promqa.tolerant_reader import read_pairs

#: Reply readers: the default first.
PARSERS = ("tolerant", "official")
DEFAULT_PARSER = PARSERS[0]

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


def parse_pairs(reply: str | None, mode: str = DEFAULT_PARSER) -> list[QAPair]:
    """Every question with its answers, in reply order, read by `mode` (see the module doc)."""
    if not reply:
        return []
    if mode == "tolerant":
        return [QAPair(question, tuple(answers)) for question, answers in read_pairs(reply)]
    if mode != "official":
        raise ValueError(f"unknown reply parser {mode!r}; parsers: {', '.join(PARSERS)}")
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


def usable_pairs(reply: str | None, mode: str = DEFAULT_PARSER) -> list[QAPair]:
    """The `parse` of a generation call: the pairs, or `InvalidReply` when none has an answer."""
    pairs = parse_pairs(reply, mode)
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
