"""ExpVid's vision-centric audits, run on SciVideoBench items.

- blind answerability: the text-only model gets SciVideoBench's official evaluation prompt (the
  suite's `build_prompt`, with its mm:ss -> "frame N" rewrite) and no frames, `blind_samples` times
  (seeds 0..n-1); strict extraction; flagged when its accuracy beats chance (1/10) by `blind_margin`;
- narration leakage: the question repeats narration words that single out the correct option
  (ExpVid's `asr_leakage` rule over the whole video's narration);
- option-length bias and answer-in-question: ExpVid's `text_checks` (the correct option the unique
  longest by 1.25x; the correct option written in the question).
Flags go into `provenance.jsonl` and the platform's review pages like the ExpVid build's.
"""

from __future__ import annotations

import asyncio
import hashlib

from expvid.construction.audits import AuditResult, asr_leakage, text_checks
from expvid.construction.llm import DraftFailure, LLMClient
from expvid.construction.retries import CURRENT_EXPERIMENT
from expvid.models.types import Message, TextPart
from expvid.schema import ExtractionStatus, Item
from expvid.scoring import extract_answer
from expvid.suites.scivideobench.prompts import build_prompt

PROMPT_ID = "scivideobench_official_prompt"
CHANCE = 0.1


def _accept(text: str | None) -> str:
    return text or ""


async def blind_audit(
    client: LLMClient | None,
    items: list[Item],
    audit: AuditResult,
    *,
    samples: int,
    temperature: float,
    margin: float,
    calls: asyncio.Semaphore,
) -> None:
    if client is None or samples == 0:
        return

    async def one(item: Item, seed: int) -> str | None:
        prompt = build_prompt(item)
        messages = [Message(role="user", content=[TextPart(text=prompt)])]
        digest = hashlib.sha256(b"scivideobench official prompt").hexdigest()
        try:
            async with calls:
                reply = await client.ask(
                    messages,
                    _accept,
                    prompt_id=PROMPT_ID,
                    prompt_sha256=digest,
                    stage=PROMPT_ID,
                    seed=seed,
                    temperature=temperature,
                    phase="blind_audit",
                )
        except DraftFailure as failure:
            audit.problems.append(failure_problem(item, failure))
            return None
        return reply.value

    async def per_item(item: Item) -> None:
        CURRENT_EXPERIMENT.set(str(item.meta.get("video_id")))  # its `--redo blind:ID` epoch
        replies = await asyncio.gather(*(one(item, seed) for seed in range(samples)))
        answered = [r for r in replies if r is not None]
        if not answered:
            return
        hits = [
            1.0
            if (e := extract_answer(r, item)).status is ExtractionStatus.OK and e.value == item.answer
            else 0.0
            for r in answered
        ]
        score = sum(hits) / len(hits)
        audit.blind[item.id] = {"samples": len(hits), "accuracy": round(score, 4), "chance": CHANCE}
        if score - CHANCE >= margin:
            audit.flag(
                item.id,
                "blind_answerable",
                f"answered without the video {sum(hits):.0f}/{len(hits)} times (chance {CHANCE:.0%})",
                score,
            )

    await asyncio.gather(*(per_item(item) for item in items))


def failure_problem(item: Item, failure: DraftFailure):  # type: ignore[no-untyped-def]
    from expvid.construction.drafts import Problem

    return Problem(
        video_id=str(item.meta.get("video_id")),
        stage="blind_audit",
        message=f"{item.id}: {failure}",
        transient=failure.transient,
        failed=True,
    )


def text_audits(
    items: list[Item], narrations: dict[str, str], audit: AuditResult, *, narration: bool
) -> None:
    text_checks(items, audit)
    if narration:
        asr_leakage(
            [
                i.model_copy(update={"context": narrations.get(str(i.meta.get("video_id")), "")})
                for i in items
            ],
            audit,
        )
