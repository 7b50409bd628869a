"""Separating a reasoning model's thoughts from its answer.

Reasoning models write `<think>...</think>` (Qwen3, DeepSeek-R1, MiMo, GLM) or
`<thinking>...</thinking>` before the answer. The thoughts routinely contain tentative answers
("maybe \\boxed{C}?"), so extraction must only ever look at what follows them (VLMEvalKit #989).
Two truncated shapes occur in practice and are handled too:

- an unclosed leading block (`<think> ...` cut off by max_tokens): everything is reasoning, the
  answer is empty, and extraction reports it unparseable rather than mining the thoughts;
- a closing tag with no opening tag (chat templates that inject `<think>` into the prompt, so the
  reply starts mid-thought): everything before the last `</think>` is reasoning.
"""

from __future__ import annotations

import re

_TAG = r"think(?:ing)?"
_BLOCK = re.compile(rf"<\s*({_TAG})\s*>(.*?)<\s*/\s*\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN = re.compile(rf"^\s*<\s*{_TAG}\s*>", re.IGNORECASE)
_CLOSE = re.compile(rf"<\s*/\s*{_TAG}\s*>", re.IGNORECASE)


def split_reasoning(response: str) -> tuple[str, str | None]:
    """Return `(answer_text, reasoning)`; reasoning is None when the reply had no think block.

    Every closed block is removed wherever it is; the pieces of reasoning are joined with blank
    lines in their original order.
    """
    pieces: list[str] = []

    def _take(match: re.Match[str]) -> str:
        pieces.append(match.group(2).strip())
        return "\n"

    text = _BLOCK.sub(_take, response)

    closes = list(_CLOSE.finditer(text))
    if closes:  # reply started mid-thought: "...reasoning...</think> answer"
        last = closes[-1]
        pieces.insert(0, _CLOSE.sub("", text[: last.start()]).strip())
        text = text[last.end() :]

    opening = _OPEN.match(text)
    if opening:  # "<think> ..." never closed: the reply was cut off while thinking
        pieces.append(text[opening.end() :].strip())
        text = ""

    if not pieces:
        return response.strip(), None
    return text.strip(), "\n\n".join(p for p in pieces if p) or ""
