"""Reading question-answer lists as generators really write them (the recipe's default parser).

The prompt asks for `* question` lines with their answers as `    * answer` lines below. Models
follow that loosely (ProMQA B.2 reports Gemini's bold text and other deviations): Windows line
ends, tab indents, `-` / `+` / `•` / numbered bullets, `Question:` / `[answer]` / `Q1:` tags,
quotes or angle brackets around the text, the list inside a fenced block, and a sentence before or
after the list. The official regular expression reads most of those as nothing, or copies the
markup into the question. This reader recovers the same pairs and never copies markup into them.

How a line is read:
1. `\\r\\n` and `\\r` end lines; a tab indents by 4; fence lines (```` ``` ````, `~~~`), `#`
   heading marks and `**` / `__` bold marks are dropped.
2. A line is an *item* when it starts with a bullet (`*`, `-`, `+`, `•`, a number `1.` / `1)` /
   `(1)`, a letter `a)`) or a tag, or when it is a plain line ending in `?` directly above deeper
   indented items. Any other line (a preamble, a closing remark) is commentary and is skipped. A
   line that is only a tag (`Answers:`) gives its role to the untagged items after it.
3. The item's role: its tag (`Question`, `Q1`, `[question]`, `Answer 1-2`, `A:` ...) first; else a
   sub-numbered bullet (`1.1`, `1-2`) is an answer; else nesting (items at the shallowest indent
   are questions, deeper ones answers); in a flat list, the untagged items have the role no tag
   names when tags name only one, else the first bullet kind is questions against a second kind
   (`1.` questions, `-` answers), else text ending in `?` is a question.
4. Quotes, backticks, angle brackets and `*` / `_` emphasis wrapping the whole text are removed,
   then surrounding spaces.
5. An answer belongs to the question before it. A question with no answer is kept only when it is
   worded as a question (ends in `?`); otherwise it was commentary written as a bullet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(\s*)#{1,6}\s+")
_BULLET = re.compile(
    r"^(?P<marker>[*\-+•●◦▪‣–—]|(?P<number>\d{1,2}(?:[.\-]\d{1,2})*)[.):]|\((?:\d{1,2}|[a-z])\)|[a-z][.)])\s+(?P<rest>.*)$",
    re.IGNORECASE,
)
#: `Question:`, `Answer 1-2 -`, `[question]`, `(answers)`, `Q1:`, `A:`, `[Q]`. A lone Q or A needs a
#: colon or brackets: "A. Should I...?" is a lettered bullet and "A1 sauce" is text.
_TAG = re.compile(
    r"^(?:(?P<open>[\[(])\s*)?(?:(?P<word>questions?|answers?)|(?P<letter>q|a))"
    r"\s*(?:\d{1,2}(?:\s*[.\-]\s*\d{1,2})*)?\s*"
    r"(?(open)[\])]\s*[:.\-–—]?|(?(word)[:.\-–—)]|:))\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_WRAPPERS = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("`", "`"), ("<", ">"),
             ("*", "*"), ("_", "_"))  # fmt: skip


@dataclass
class _Item:
    indent: int
    kind: str  # the bullet's kind ("*", "-", "number", "letter", ...); "" for tags and plain lines
    role: str | None  # "q" / "a" from a tag or a sub-number; None when structure decides
    text: str


@dataclass
class _Pending:
    """A tag alone on its line ("Answers:"): the role it gives the bullets below it (those at its
    indent or deeper, of the first bullet kind that follows)."""

    role: str
    indent: int
    kind: str = ""


def _unwrap(text: str) -> str:
    """The text without quotes / emphasis / brackets around all of it (repeatedly), trimmed."""
    text = text.strip()
    changed = True
    while changed and len(text) >= 2:
        changed = False
        for left, right in _WRAPPERS:
            inner = text[len(left) : -len(right)]
            if text.startswith(left) and text.endswith(right) and left not in inner and right not in inner:
                text, changed = inner.strip(), True
                break
    return text


def _tag(text: str) -> tuple[str | None, str]:
    """("q" | "a" | None, the text after the tag)."""
    found = _TAG.match(text)
    if found is None:
        return None, text
    role = "q" if (found.group("word") or found.group("letter")).lower().startswith("q") else "a"
    return role, found.group("rest")


def _lines(reply: str) -> list[tuple[int, str]]:
    text = reply.replace("\r\n", "\n").replace("\r", "\n").replace("\u00a0", " ")
    out = []
    for raw in text.split("\n"):
        if _FENCE.match(raw):
            continue
        line = raw.expandtabs(4).replace("**", "").replace("__", "").rstrip()
        line = _HEADING.sub(r"\1", line)  # "### Question 1" -> "Question 1", indent kept
        if line.strip():
            out.append((len(line) - len(line.lstrip()), line.strip()))
    return out


def _items(reply: str) -> list[_Item]:
    lines = _lines(reply)
    items: list[_Item] = []
    pending: _Pending | None = None
    for index, (indent, line) in enumerate(lines):
        bullet = _BULLET.match(line)
        role, rest = _tag(line)
        if role is not None:
            kind = ""
        elif bullet is not None:
            marker, number, rest = bullet.group("marker"), bullet.group("number"), bullet.group("rest")
            kind = "number" if number or marker[0] == "(" else "letter" if marker[0].isalpha() else marker[0]
            role, rest = _tag(rest)
            if role is None and number and re.search(r"[.\-]", number):
                role = "a"
        else:  # a plain line: a question only when it ends in "?" above deeper items, else commentary
            kind = ""
            deeper = index + 1 < len(lines) and lines[index + 1][0] > indent
            if not (_unwrap(line).endswith("?") and deeper):
                continue
        text = _unwrap(rest)
        if not text:
            if role is not None:
                pending = _Pending(role, indent)  # "Answers:" on its own line
            continue
        if role is None and pending is not None and kind and indent >= pending.indent:
            pending.kind = pending.kind or kind
            if pending.kind == kind:
                role = pending.role
            else:
                pending = None
        elif role is not None or (pending is not None and indent < pending.indent):
            pending = None
        items.append(_Item(indent, kind, role, text))
    return items


def _roles(items: list[_Item]) -> list[str]:
    """Each item's role (see the module doc, step 3)."""
    given = {item.role for item in items if item.role is not None}
    open_items = [item for item in items if item.role is None]
    indents = sorted({item.indent for item in open_items})
    kinds = list(dict.fromkeys(item.kind for item in open_items))
    roles = []
    for item in items:
        if item.role is not None:
            roles.append(item.role)
        elif len(indents) > 1:
            roles.append("q" if item.indent == indents[0] else "a")
        elif len(given) == 1:  # only one role is tagged: the untagged items have the other
            roles.append("a" if given == {"q"} else "q")
        elif len(kinds) > 1:
            roles.append("q" if item.kind == kinds[0] else "a")
        else:
            roles.append("q" if item.text.endswith("?") else "a")
    return roles


def read_pairs(reply: str) -> list[tuple[str, list[str]]]:
    """(question, answers) in reply order (see the module doc)."""
    items = _items(reply)
    pairs: list[tuple[str, list[str]]] = []
    for item, role in zip(items, _roles(items), strict=True):
        if role == "q":
            pairs.append((item.text, []))
        elif pairs:
            pairs[-1][1].append(item.text)
    return [(q, answers) for q, answers in pairs if answers or q.endswith("?")]
