"""Stopping a running `generate()` from outside: Ctrl-C must not wait for 8192 tokens.

torch cannot interrupt a forward pass, but transformers asks its stopping criteria after every
token. This criterion says "stop" for every row once its event is set (the backend sets it when it
is closed), so an interrupted run ends within one decoding step instead of one full generation.
"""

from __future__ import annotations

import threading
from typing import Any

import torch
from transformers import StoppingCriteria


class StopWhenSet(StoppingCriteria):
    def __init__(self, event: threading.Event) -> None:
        self.event = event

    def __call__(
        self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any
    ) -> torch.BoolTensor:
        stop = self.event.is_set()
        return torch.full((input_ids.shape[0],), stop, dtype=torch.bool, device=input_ids.device)  # type: ignore[return-value]
