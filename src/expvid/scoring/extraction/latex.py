"""`\\boxed{...}` and the LaTeX / Markdown dressing models put around answers.

The ExpVid prompts (paper appendix F.4) ask for the final answer "enclosed in \\boxed{}", so the
last box is the model's committed answer. Contents are nested more often than one expects
(`\\boxed{\\text{B}}`, `\\boxed{37^{\\circ}\\text{C}}`), so boxes are read with a brace counter,
not a regex. A box whose braces never close (a reply cut off by max_tokens) is ignored.
"""

from __future__ import annotations

import re

_BOX_START = re.compile(r"\\(?:boxed|fbox)\s*\{")

#: Commands whose argument is plain text: `\text{B}` -> `B`.
_UNWRAP_COMMANDS = (
    "text",
    "textbf",
    "textit",
    "textrm",
    "texttt",
    "textsf",
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "emph",
    "operatorname",
    "mbox",
    "boxed",
    "fbox",
)
_UNWRAP = re.compile(r"\\(?:" + "|".join(_UNWRAP_COMMANDS) + r")\s*\{")

#: Symbols that survive as text once the LaTeX is gone.
_SYMBOLS: tuple[tuple[str, str], ...] = (
    (r"^{\circ}", "°"),
    (r"^\circ", "°"),
    (r"\circ", "°"),
    (r"\degree", "°"),
    (r"\mu", "µ"),
    (r"\times", "×"),
    (r"\pm", "±"),
    (r"\approx", "≈"),
    (r"\sim", "~"),
    (r"\leq", "≤"),
    (r"\geq", "≥"),
    (r"\le", "≤"),
    (r"\ge", "≥"),
    (r"\alpha", "α"),
    (r"\beta", "β"),
    (r"\gamma", "γ"),
    (r"\delta", "δ"),
    (r"\%", "%"),
    (r"\&", "&"),
    (r"\_", "_"),
    (r"\#", "#"),
    (r"\{", "{"),
    (r"\}", "}"),
    (r"\,", " "),
    (r"\;", " "),
    (r"\:", " "),
    (r"\!", ""),
    (r"\quad", " "),
    (r"\ ", " "),
    (r"\\", "\n"),
)

_MATH_DELIMITERS = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\$")
_SCRIPT = re.compile(r"([_^])\{([^{}]*)\}")
_EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1|(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|`([^`]*)`", re.DOTALL)
_TRAILING = ".,;:!?。，；：！？"
_PAIRS = {"(": ")", "[": "]", "{": "}", '"': '"', "'": "'", "“": "”", "‘": "’", "「": "」", "（": "）"}


def _closing_brace(text: str, open_index: int) -> int | None:
    """Index of the `}` matching the `{` at `open_index`, or None when it never closes."""
    depth = 0
    index = open_index
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in "{}":
            index += 2  # an escaped brace does not count
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def find_boxed(text: str) -> list[str]:
    """Contents of every complete `\\boxed{...}` / `\\fbox{...}` in reading order (raw, uncleaned).

    A box nested inside another box is part of the outer one's content, not a separate answer.
    """
    found: list[str] = []
    position = 0
    while True:
        match = _BOX_START.search(text, position)
        if match is None:
            return found
        close = _closing_brace(text, match.end() - 1)
        if close is None:  # unbalanced: skip this opening, a later complete box may still exist
            position = match.end()
            continue
        found.append(text[match.end() : close])
        position = close + 1


def last_boxed(text: str) -> str | None:
    boxes = find_boxed(text)
    return boxes[-1] if boxes else None


def _unwrap_commands(text: str) -> str:
    """Replace `\\text{x}` (and friends, nested) by `x`."""
    while True:
        match = _UNWRAP.search(text)
        if match is None:
            return text
        close = _closing_brace(text, match.end() - 1)
        if close is None:
            return text[: match.start()] + text[match.end() :]
        text = text[: match.start()] + text[match.end() : close] + text[close + 1 :]


def latex_to_text(text: str) -> str:
    """Turn the LaTeX bits models use in short answers into plain text.

    `37^{\\circ}\\text{C}` -> `37°C`, `5\\,\\mu\\text{L}` -> `5 µL`, `\\text{(B)}` -> `(B)`.
    Only the handful of constructs seen in answers are handled; anything else passes through.
    """
    text = _unwrap_commands(text)
    for latex, plain in _SYMBOLS:
        text = text.replace(latex, plain)
    text = _SCRIPT.sub(lambda m: ("" if m.group(2) == "°" else m.group(1)) + m.group(2), text)
    text = re.sub(r"\^(?=°)", "", text)
    text = _MATH_DELIMITERS.sub("", text)
    return text


def strip_markdown(text: str) -> str:
    """`**B**` -> `B`, `*B*` -> `B`, `` `B` `` -> `B` (emphasis anywhere in the text)."""
    return _EMPHASIS.sub(lambda m: next(g for g in m.groups()[1:] if g is not None), text)


def strip_wrappers(text: str) -> str:
    """Peel whitespace, enclosing brackets/quotes and trailing punctuation until nothing changes.

    Brackets are only removed when they enclose the whole text, so `(B)` -> `B` but
    `(a) and (b)` stays as it is.
    """
    while True:
        before = text
        text = text.strip().rstrip(_TRAILING).strip()
        if len(text) >= 2 and text[0] in _PAIRS and text[-1] == _PAIRS[text[0]]:
            inner = text[1:-1]
            if text[0] not in "([{（" or _balanced(inner, text[0], _PAIRS[text[0]]):
                text = inner
        if text == before:
            return text


def _balanced(text: str, opening: str, closing: str) -> bool:
    depth = 0
    for char in text:
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def clean_answer_text(text: str) -> str:
    """LaTeX -> text, Markdown emphasis removed, wrappers peeled; whitespace collapsed per line."""
    text = strip_markdown(latex_to_text(text))
    text = "\n".join(re.sub(r"[ \t\u00a0]+", " ", line).strip() for line in text.splitlines())
    return strip_wrappers(text)
