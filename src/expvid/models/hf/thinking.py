"""A thinking budget for local reasoning models: close the thought after N tokens, then let it answer.

Qwen3-style models think inside `<think> ... </think>` and answer after it. transformers has no
budget of its own, so this logits processor counts each row's thinking tokens and, once a row has
spent `budget` of them without closing its thought, forces the closing tag; the model then writes
its answer as usual (the "budget forcing" recipe of Qwen3's and s1's reports). A thought counts as
open when the row generated the opening tag, or when the prompt itself ends inside one (templates
that pre-fill "<think>\\n" for the model).

Rows are independent, so this works inside batches with left padding.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessor

from expvid.models.types import at_least_one

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def think_token_ids(tokenizer: Any) -> tuple[int, int] | None:
    """Ids of `<think>` and `</think>` when both are real single tokens, else None (no budget possible).

    A tag the vocabulary does not know encodes to the unknown token, which is one token too, so the
    tag must also map to its own id and decode back to itself.
    """
    ids = []
    for tag in (THINK_OPEN, THINK_CLOSE):
        encoded = tokenizer.encode(tag, add_special_tokens=False)
        if len(encoded) != 1 or encoded[0] == tokenizer.unk_token_id:
            return None
        if tokenizer.decode(encoded).strip() != tag:
            return None
        ids.append(int(encoded[0]))
    return ids[0], ids[1]


class ThinkingBudget(LogitsProcessor):
    def __init__(self, *, budget: int, open_id: int, close_id: int, prompt_length: int) -> None:
        self.budget = at_least_one("budget", budget)
        self.open_id = open_id
        self.close_id = close_id
        self.prompt_length = prompt_length
        self.forced_rows: set[int] = set()

    def _prompt_left_open(self, prompt: torch.Tensor) -> bool:
        opens = (prompt == self.open_id).nonzero()
        if opens.numel() == 0:
            return False
        closes = (prompt == self.close_id).nonzero()
        return closes.numel() == 0 or int(closes.max()) < int(opens.max())

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for row in range(input_ids.shape[0]):
            generated = input_ids[row, self.prompt_length :]
            if (generated == self.close_id).any():
                continue
            opened_at = (generated == self.open_id).nonzero()
            if opened_at.numel() > 0:
                spent = generated.shape[0] - int(opened_at[0]) - 1
            elif self._prompt_left_open(input_ids[row, : self.prompt_length]):
                spent = generated.shape[0]
            else:
                continue
            if spent >= self.budget:
                forced = torch.full_like(scores[row], float("-inf"))
                forced[self.close_id] = 0.0
                scores[row] = forced
                self.forced_rows.add(row)
        return scores
