"""Fill-in-the-blank answers (ExpVid level 3): one string per blank, in order.

The F.4 prompt asks for "a list of words or phrases (comma-separated) enclosed in \\boxed{ }", so
the last box is split on commas, semicolons and newlines (full-width "，", "；" and "、" too).
Answers occasionally contain commas themselves; a count that differs from the number of blanks is
kept as it is and recorded in `detail`, because the judge decides blank by blank (missing blanks
are wrong, extra ones ignored) and re-splitting by guesswork would be worse. Two splits are safe
and done: thousands separators ("1,000 rpm") are not split, and an Oxford-comma "and c" loses its
"and".
"""

from __future__ import annotations

import re

from expvid.schema import Item
from expvid.scoring.extraction.latex import clean_answer_text, find_boxed, latex_to_text, strip_markdown
from expvid.scoring.extraction.phrases import answer_phrases
from expvid.scoring.extraction.types import Extraction

_SEPARATORS = re.compile(r"\s*(?:[,;，；、]|\n+)\s*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ENUMERATOR = re.compile(r"^(?:\((\d+)\)|(\d+)[.)]|(?i:blank)\s*(\d+)\s*[:：.)-])\s*")
_INLINE_ENUMERATOR = re.compile(r"\((\d+)\)")
_PROTECTED = "\x00"


def split_blanks(text: str) -> list[str]:
    """Split one answer text into blank answers, cleaned; trailing empty parts are dropped."""
    text = strip_markdown(latex_to_text(text))
    text = _THOUSANDS.sub(_PROTECTED, text)
    inline = [int(n) for n in _INLINE_ENUMERATOR.findall(text)]
    if len(inline) >= 2 and inline == list(range(1, len(inline) + 1)) and not _SEPARATORS.search(text):
        text = "\n".join(_INLINE_ENUMERATOR.split(text)[2::2])  # "(1) a (2) b" -> "a\nb"
    parts = [clean_answer_text(part.replace(_PROTECTED, ",")) for part in _SEPARATORS.split(text.strip())]
    while parts and not parts[-1]:
        parts.pop()
    while parts and not parts[0]:
        parts.pop(0)
    if len(parts) >= 2 and re.match(r"(?i:and|&)\s+\S", parts[-1]):
        parts[-1] = re.sub(r"^(?i:and|&)\s+", "", parts[-1])
    return _strip_enumerators(parts)


def _strip_enumerators(parts: list[str]) -> list[str]:
    """Drop "(1) ", "1. ", "Blank 1: " prefixes, but only when every part is numbered 1, 2, 3, ..."""
    matches = [_ENUMERATOR.match(part) for part in parts]
    if not parts or not all(matches):
        return parts
    numbers = [int(next(g for g in m.groups() if g)) for m in matches if m]
    if numbers != list(range(1, len(parts) + 1)):
        return parts
    return [clean_answer_text(part[m.end() :]) for part, m in zip(parts, matches, strict=True) if m]


def _with_count(parts: list[str], item: Item, rule: str) -> Extraction:
    expected = item.n_blanks
    detail = None
    if expected and len(parts) != expected:
        detail = f"{len(parts)} answer(s) for {expected} blank(s)"
    return Extraction.found(parts, rule, detail)


def extract_blanks(text: str, item: Item) -> Extraction:
    """Blank answers from the last box (or one box per blank), an answer statement, or a one-line reply."""
    boxes = [box for box in find_boxed(text) if clean_answer_text(box)]
    expected = item.n_blanks
    if boxes:
        parts = split_blanks(boxes[-1])
        if expected and len(parts) < expected <= len(boxes):
            singles = [split_blanks(box) for box in boxes[-expected:]]
            if all(len(single) == 1 for single in singles):
                return _with_count([single[0] for single in singles], item, "boxed_each")
        if not parts:
            return Extraction.unparseable("last box holds no answer", rule="boxed")
        return _with_count(parts, item, "boxed")
    plain = strip_markdown(latex_to_text(text))
    for phrase in reversed(answer_phrases(plain)):
        parts = split_blanks(phrase.rest)
        if parts:
            return _with_count(parts, item, "answer_phrase")
    stripped = plain.strip()
    if stripped and "\n" not in stripped:
        parts = split_blanks(stripped)
        if parts and len(parts) == expected:
            return _with_count(parts, item, "whole_reply")
    return Extraction.unparseable("no boxed answer, answer statement or one-line list of blank answers")
