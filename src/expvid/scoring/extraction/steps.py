"""Step numbers (ExpVid step prediction) and step-number lists (ExpVid sequence generation).

Both questions carry the experiment's full numbered step list, so the valid step numbers can be
read from the question itself. The release's step-prediction questions omit the "1." before the
first step (formats.md), so the list is read as a chain "2.", "3.", ... in order and step 1 is
implied; a stray "7." inside a step's text cannot extend the chain unless it is the next number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from expvid.schema import Item
from expvid.scoring.extraction.latex import clean_answer_text, find_boxed, latex_to_text, strip_markdown
from expvid.scoring.extraction.phrases import answer_phrases
from expvid.scoring.extraction.types import Extraction

_NUMBERED = re.compile(r"(?:^|(?<=[\s:：]))(\d{1,3})[.)]\s+(?=\S)", re.MULTILINE)
_STEP_WORD = re.compile(r"\b(?:steps?|no\.?|number|#)\s*", re.IGNORECASE)
_ONE_NUMBER = re.compile(r"(?:(?i:step)\s*)?#?\s*(\d+)\s*\.?")
_NUMBER_WITH_TEXT = re.compile(r"(?:(?i:step)\s*)?#?\s*(\d+)\s*[.:：)]\s+\S.*")
#: A number stated as the answer; not a decimal, and not a quantity ("5 mL", "37 °C", "10 min").
_STATED_NUMBER = re.compile(
    r"\s*(?:(?i:step)\s*)?#?\s*(\d+)(?!\d)(?![.,]\d)"
    r"(?!\s*(?:%|°|[µμu]|(?i:[mnkd]?[lgm]|mol|min|mins|h|hrs?|hours?|s|secs?|seconds?|days?|weeks?|[cmn]m|rpm|x\s*g|×)\b))"
)
_NEXT_STEP = re.compile(
    r"\bnext\s+(?:step|operation)\s+(?:is|will\s+be|would\s+be)\s*[:：]?\s*", re.IGNORECASE
)
_TOKEN = re.compile(
    r"\s*(?:(\d+)\s*(?:[-–—~]|\bto\b)\s*(\d+)|(\d+)\.?(?!\d)|→|->|=>|⟶|⇒|\band\b|\bthen\b|[,;，；、])\s*",
    re.IGNORECASE,
)
_MAX_RANGE = 200


def step_numbers_in_question(question: str) -> list[int] | None:
    """The step numbers of the numbered list in `question` (1..N), or None when it has no list."""
    expected: int | None = None
    last = 0
    for match in _NUMBERED.finditer(question):
        number = int(match.group(1))
        if expected is None:
            if number in (1, 2):
                expected, last = number + 1, number
            continue
        if number == expected:
            last, expected = number, number + 1
    if last < 2:
        return None
    return list(range(1, last + 1))


def candidate_steps(item: Item) -> list[int] | None:
    """Valid step numbers: the loader's `meta["step_numbers"]` if set, else parsed from the question."""
    given = item.meta.get("step_numbers")
    if isinstance(given, Sequence) and not isinstance(given, str) and given:
        return sorted({int(n) for n in given})
    return step_numbers_in_question(item.question)


def _single_number(content: str) -> int | None:
    cleaned = clean_answer_text(content)
    match = _ONE_NUMBER.fullmatch(cleaned) or _NUMBER_WITH_TEXT.fullmatch(cleaned)
    return int(match.group(1)) if match else None


def _check_step(number: int, item: Item, rule: str) -> Extraction:
    candidates = candidate_steps(item)
    if candidates is not None and number not in candidates:
        return Extraction.unparseable(
            f"step {number} is not in the item's step list ({candidates[0]}-{candidates[-1]})", rule=rule
        )
    return Extraction.found(number, rule)


def extract_step_number(text: str, item: Item) -> Extraction:
    """One step number: boxed first, then "answer is (step) N", then a reply that is only "N"."""
    boxes = [box for box in find_boxed(text) if clean_answer_text(box)]
    if boxes:
        number = _single_number(boxes[-1])
        if number is None:
            shown = clean_answer_text(boxes[-1])
            return Extraction.unparseable(f"last box {shown!r} is not a single step number", rule="boxed")
        return _check_step(number, item, "boxed")
    plain = strip_markdown(latex_to_text(text))
    stated: list[tuple[int, int]] = []
    for phrase in answer_phrases(plain):
        head = _STATED_NUMBER.match(phrase.rest)
        if head:
            stated.append((phrase.start, int(head.group(1))))
    for match in _NEXT_STEP.finditer(plain):
        rest = plain[match.end() :]
        head = re.match(r"(?:(?i:step)\s*)?#?\s*(\d+)\b(?![.,]\d)", rest)
        if head:
            stated.append((match.start(), int(head.group(1))))
    if stated:
        return _check_step(max(stated)[1], item, "answer_phrase")
    number = _single_number(plain) if "\n" not in plain.strip() else None
    if number is not None:
        return _check_step(number, item, "whole_reply")
    return Extraction.unparseable("no boxed step number, answer statement or lone number")


def parse_step_list(text: str) -> list[int] | None:
    """Step numbers from "13, 14, 15", "[3; 5]", "Steps 3-5", "2 → 4 → 6", one per line, ...

    Ranges are expanded ("3-5" -> 3, 4, 5; ascending and at most 200 long, else the text is not a
    list). Duplicates are dropped keeping the first occurrence. Returns None when the text holds
    anything besides numbers, ranges, "step" words and separators, except when every line (or
    every part) starts with its step number ("13. Pour the gel") - then those numbers are the list.
    """
    cleaned = clean_answer_text(text)
    scanned = _scan_numbers(_STEP_WORD.sub(" ", re.sub(r"[\[\](){}]", " ", cleaned)))
    if scanned:
        return _dedupe(scanned)
    leading = _leading_numbers(cleaned)
    return _dedupe(leading) if leading else None


def _scan_numbers(text: str) -> list[int] | None:
    """Read `text` as numbers, ranges and separators only; None as soon as anything else appears."""
    numbers: list[int] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            return None
        low, high, single = match.group(1), match.group(2), match.group(3)
        if low is not None and high is not None:
            first, last = int(low), int(high)
            if last < first or last - first > _MAX_RANGE:
                return None
            numbers.extend(range(first, last + 1))
        elif single is not None:
            numbers.append(int(single))
        position = match.end()
    return numbers or None


def _leading_numbers(text: str) -> list[int]:
    """Numbers that start every line (or every comma/semicolon part): "13. Pour ...\\n14. Stir ..."."""
    for separator in (r"\n+", r"[;；]\s*", r",\s*(?=(?i:step)?\s*\d)"):
        parts = [part.strip() for part in re.split(separator, text) if part.strip()]
        heads = [re.match(r"(?:(?i:step)\s*)?(\d+)\s*[.:：)]\s*(?![\d\s])", part) for part in parts]
        if all(heads) and (len(parts) > 1 or separator == r"\n+"):
            return [int(h.group(1)) for h in heads if h]
    return []


def _dedupe(numbers: list[int]) -> list[int]:
    seen: set[int] = set()
    return [n for n in numbers if not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]


def extract_step_sequence(text: str, item: Item) -> Extraction:
    """A list of step numbers: the last box, else "answer is ...", else a reply of only numbers."""
    boxes = [box for box in find_boxed(text) if clean_answer_text(box)]
    if boxes:
        steps = parse_step_list(boxes[-1])
        if not steps:
            shown = clean_answer_text(boxes[-1])
            return Extraction.unparseable(f"last box {shown!r} is not a list of step numbers", rule="boxed")
        return Extraction.found(steps, "boxed")
    plain = strip_markdown(latex_to_text(text))
    for phrase in reversed(answer_phrases(plain)):
        steps = parse_step_list(phrase.rest)
        if steps:
            return Extraction.found(steps, "answer_phrase")
    steps = parse_step_list(plain)
    if steps:
        return Extraction.found(steps, "whole_reply")
    return Extraction.unparseable("no boxed list, answer statement or reply made only of step numbers")
