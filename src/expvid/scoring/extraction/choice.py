"""Option letters for multiple-choice items (ExpVid L1, ordering, verification; any suite's choices).

Strict by design: a letter only counts when it stands alone as a letter. "60°C", "5 mL",
"A549 cells", "Vitamin D", "N/A" and the article in "A good choice is ..." never yield a letter,
and a letter outside the item's own options ("E" when the options are A-D) is reported as
unparseable, not mapped to anything. Order of rules (first that applies decides):

1. the last non-empty `\\boxed{}`: a letter, a letter with its option text, or an option's text;
2. the last explicit answer statement ("The answer is B", "Answer: (B)", "Final answer: B"), or,
   when there is none, the last "Option B is correct" / "(B) is the right answer";
3. the whole reply is a lone letter ("B", "(B)", "B.", "B)", "Option B");
4. the whole reply is exactly one option's text (case- and space-insensitive), optionally with
   its letter in front ("B. agarose beads").
"""

from __future__ import annotations

import re
from functools import lru_cache

from expvid.schema import Item
from expvid.scoring.extraction.latex import clean_answer_text, find_boxed, latex_to_text, strip_markdown
from expvid.scoring.extraction.phrases import answer_phrases
from expvid.scoring.extraction.types import Extraction

_LONE_LETTER = re.compile(r"(?:(?:option|choice|answer)\s*[:：]?\s*)?\(?([A-Ja-j])\)?", re.IGNORECASE)
_LETTER_WITH_TEXT = re.compile(r"\(?([A-J])\s*([.:：)])\s*(.+)", re.DOTALL)
_PAREN_LETTER_WITH_TEXT = re.compile(r"\(([A-J])\)\s*(.+)", re.DOTALL)
#: "Option B is correct", "(B) is the right answer", or a line starting "B is correct"; a bare
#: letter inside a sentence ("Vitamin D is the best choice") does not count.
_STATED_CORRECT = re.compile(
    r"(?:\b(?i:option|choice)\s+\(?([A-J])\)?|\(([A-J])\)|(?m:^)[ \t]*([A-J]))"
    r"\s+is\s+(?:the\s+)?(?:correct|right|best)\b"
)
#: What may follow a stated letter for it to count as a letter ("Answer: B." / "B, because").
_AFTER_LETTER = re.compile(
    r"\s*(?:$|[.,;:!?)\]}*\"'”’。，；：]|\n|[-–—]\s|(?:is|because|since|as|which|with|based)\b)",
    re.IGNORECASE,
)
#: A capital letter right after an answer lead, not glued to more letters or digits ("A549").
_PHRASE_LETTER = re.compile(r"\s*(?:(?i:option|choice)\s*)?[(\[\"'“*]*\s*([A-J])(?![A-Za-z0-9°/])")
_OPTION_PREFIX = re.compile(r"^\(?[A-J]\s*[.:)]\s+")


@lru_cache(maxsize=1 << 16)
def normalise_option_text(text: str) -> str:
    """Case- and space-insensitive form of an option (or reply) for exact text comparison. Cached: a
    run compares every reply with every option of its item, and options repeat across items."""
    text = clean_answer_text(text)
    return re.sub(r"\s+", " ", text).casefold().strip()


def _letters(item: Item) -> list[str]:
    return list(item.options or {})


def _describe_letters(letters: list[str]) -> str:
    return f"{letters[0]}-{letters[-1]}" if len(letters) > 1 else "".join(letters)


def _option_by_text(text: str, item: Item) -> tuple[str | None, str | None]:
    """The unique option whose text equals `text`; `(None, why)` when none or several do."""
    wanted = normalise_option_text(text)
    if not wanted:
        return None, "empty"
    matches = [
        letter
        for letter, option in (item.options or {}).items()
        if wanted in (normalise_option_text(option), normalise_option_text(_OPTION_PREFIX.sub("", option)))
    ]
    if len(matches) == 1:
        return matches[0], None
    if len(matches) > 1:
        return None, f"text matches several options ({', '.join(matches)})"
    return None, "text matches no option"


def _consistent(text: str, option: str) -> bool:
    said, expected = normalise_option_text(text), normalise_option_text(option)
    return bool(said) and (said == expected or said in expected or expected in said)


def _validate(letter: str, item: Item, rule: str) -> Extraction:
    letter = letter.upper()
    letters = _letters(item)
    if letter in letters:
        return Extraction.found(letter, rule)
    return Extraction.unparseable(
        f"{letter!r} is not one of the options {_describe_letters(letters)}", rule=rule
    )


def _interpret(content: str, item: Item, rule: str) -> Extraction | None:
    """Read a self-contained answer (a box's content or a whole reply); None when it is no answer."""
    cleaned = clean_answer_text(content)
    if not cleaned:
        return None
    by_text, _ = _option_by_text(cleaned, item)
    if by_text is not None:
        return Extraction.found(by_text, f"{rule}_option_text")
    lone = _LONE_LETTER.fullmatch(cleaned)
    if lone:
        return _validate(lone.group(1), item, rule)
    with_text = _LETTER_WITH_TEXT.fullmatch(cleaned) or _PAREN_LETTER_WITH_TEXT.fullmatch(cleaned)
    if with_text:
        letter, text = with_text.group(1), with_text.group(with_text.lastindex or 2)
        separator = with_text.group(2) if with_text.re is _LETTER_WITH_TEXT else ")"
        options = item.options or {}
        if letter in options and _consistent(text, options[letter]):
            return Extraction.found(letter, f"{rule}_letter_and_text")
        other, _ = _option_by_text(text, item)
        if other is not None and other != letter:
            return Extraction.unparseable(
                f"letter {letter} but its text is option {other}'s text: {cleaned!r}", rule=rule
            )
        if separator in ":：)":
            result = _validate(letter, item, f"{rule}_letter_and_text")
            if result.ok:
                return result.model_copy(update={"detail": "text after the letter differs from the option"})
            return result
    return None


def _from_phrases(text: str, item: Item) -> Extraction | None:
    """The last explicit answer statement that names a letter (or an option's text)."""
    candidates: list[tuple[int, Extraction]] = []
    for phrase in answer_phrases(text):
        by_text, _ = _option_by_text(phrase.rest, item)
        if by_text is not None:
            candidates.append((phrase.start, Extraction.found(by_text, "answer_phrase_option_text")))
            continue
        head = _PHRASE_LETTER.match(phrase.rest)
        if head is None:
            continue
        letter = head.group(1)
        tail = phrase.rest[head.end() :].lstrip(")]\"'”*")
        option = (item.options or {}).get(letter)
        if _AFTER_LETTER.match(tail) or (option is not None and _consistent(tail, option)):
            candidates.append((phrase.start, _validate(letter, item, "answer_phrase")))
    if candidates:  # an explicit "answer is" outranks "option X is correct" (often hypothetical)
        return max(candidates, key=lambda pair: pair[0])[1]
    for match in _STATED_CORRECT.finditer(text):
        letter = next(group for group in match.groups() if group)
        candidates.append((match.start(), _validate(letter, item, "stated_correct")))
    if not candidates:
        return None
    return max(candidates, key=lambda pair: pair[0])[1]


def extract_choice(text: str, item: Item) -> Extraction:
    """An option letter of `item`, or UNPARSEABLE saying why none was found."""
    if not item.options:
        return Extraction.unparseable(f"item {item.id} is a choice item without options")
    boxes = [box for box in find_boxed(text) if clean_answer_text(box)]
    if boxes:
        result = _interpret(boxes[-1], item, "boxed")
        if result is None:
            nested = _from_phrases(strip_markdown(latex_to_text(boxes[-1])), item)
            result = nested.model_copy(update={"rule": "boxed_" + nested.rule}) if nested else None
        if result is None:
            shown = clean_answer_text(boxes[-1])
            return Extraction.unparseable(
                f"last box {shown!r} is neither an option letter nor an option's text", rule="boxed"
            )
        return result
    plain = strip_markdown(latex_to_text(text))
    stated = _from_phrases(plain, item)
    if stated is not None:
        return stated
    whole = _interpret(plain, item, "whole_reply")
    if whole is not None:
        return whole
    return Extraction.unparseable("no boxed answer, answer statement, lone letter or option text")
