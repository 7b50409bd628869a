"""Sampling with one random generator per request, so a batched answer equals the answer alone.

transformers samples every row of a batch from one global random stream (`torch.manual_seed` once,
then `torch.multinomial` over the batch): which tokens a request draws depends on which other
requests share its batch, so a seeded run's answers change with concurrency. Here each row has its
own `torch.Generator`, seeded with the request's own seed (the runner derives it from the run's seed,
the item and the sample): `RowSampler` warps each row's logits exactly as transformers' sampling
does (temperature, then top-k, top-p, min-p, with transformers' own warpers), draws the row's next
token with the row's generator, and leaves only that token possible, so generation runs in greedy
mode and picks it. Processors that run before it (repetition penalty, a thinking budget forcing
`</think>`) shape the distribution it draws from, as they would in transformers' sampling.

The sampling settings are the run's temperature plus what the checkpoint's `generation_config.json`
states (Qwen2.5-VL-Instruct: top_k 1, top_p 0.001, repetition_penalty 1.05), as vLLM applies them by
default; they are recorded in the manifest and with every prediction.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from transformers import LogitsProcessor
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)


class RowSampler(LogitsProcessor):
    """Draws each row's next token with that row's generator; returns logits that allow only it."""

    def __init__(
        self,
        seeds: Sequence[int | None],
        *,
        temperature: float,
        top_k: int | None = None,
        top_p: float | None = None,
        min_p: float | None = None,
        device: torch.device | str = "cpu",
    ) -> None:
        if temperature <= 0:
            raise ValueError("RowSampler needs a positive temperature (0 means greedy decoding)")
        self.generators = [self._generator(seed, device) for seed in seeds]
        self.warpers: list[LogitsProcessor] = [TemperatureLogitsWarper(temperature)]
        if top_k is not None and top_k > 0:
            self.warpers.append(TopKLogitsWarper(top_k=int(top_k)))
        if top_p is not None and top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p=float(top_p)))
        if min_p is not None and min_p > 0:
            self.warpers.append(MinPLogitsWarper(min_p=float(min_p)))

    @staticmethod
    def _generator(seed: int | None, device: torch.device | str) -> torch.Generator:
        generator = torch.Generator(device=device)
        if seed is None:
            generator.seed()  # unseeded request: fresh entropy, still independent of its neighbours
        else:
            generator.manual_seed(int(seed))
        return generator

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        warped = scores
        for warper in self.warpers:
            warped = warper(input_ids, warped)
        probabilities = torch.softmax(warped.float(), dim=-1)
        chosen = torch.full_like(scores, float("-inf"))
        for row, generator in enumerate(self.generators):
            token = torch.multinomial(probabilities[row], 1, generator=generator)
            chosen[row, token] = 0.0
        return chosen  # type: ignore[return-value]
