"""The level-3 judge of the paper, rebuilt: an LLM decides whether each filled blank is right.

Two protocols (`protocol`):

- "per_blank", the paper's (section 4: "comparing each predicted blank with the ground-truth
  answer using a lightweight LLM (Phi-3-mini)"): one request per filled blank, showing the question,
  that blank's reference and the model's answer (prompts/blank_judge_single.txt);
- "per_item", expvid's batched form: one request per item deciding every filled blank at once
  (prompts/blank_judge.txt). It sees the whole question, which helps with blanks that only make
  sense together, and costs one call instead of one per blank (ExpVid's Level-3 items have 1-6).

The paper never published its judge prompt, so both prompts are expvid's own; their text and sha256
go into the run manifest through `describe()`, with the protocol (the judge's name differs too, so
judgments of one protocol are never reused for the other).

Determinism: temperature 0 and a fixed seed; retries change the request (they append the
rejected reply and what was wrong with it), so a response cache in the backend cannot hand back
the same nonsense forever, and the same inputs always produce the same sequence of requests.
A reasoning judge gets a budget that fits it and a reply cut before answering is asked again with
a larger one (`calls`); a reply still cut is a failure at once (asking again with the same budget
cannot help). Failure is explicit: a backend error, or nonsense after `max_attempts` replies,
gives a `Judgment` with `error` set and no verdicts - counted as a judge failure, never as zeros.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any, Literal

from expvid.models.types import (
    BackendError,
    GenerateRequest,
    GenerateResponse,
    Message,
    ModelBackend,
    TextPart,
)
from expvid.schema import Item, JudgeSettings, Judgment, Usage
from expvid.scoring.judges.base import blanks_to_decide, gold_blanks, llm_judge_settings, merge_verdicts
from expvid.scoring.judges.calls import ask_judge, cut_before_answering, cut_message, judge_budget
from expvid.scoring.judges.verdicts import VerdictError, parse_verdicts

JudgeProtocol = Literal["per_item", "per_blank"]
JUDGE_PROTOCOLS: tuple[JudgeProtocol, ...] = ("per_item", "per_blank")
SINGLE_PROMPT_FILE = "blank_judge_single.txt"
PROMPT_FILE = "blank_judge.txt"


def load_prompt(name: str = PROMPT_FILE) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


def format_blanks(item: Item, blanks: list[str], indices: list[int]) -> str:
    """The blanks to judge, numbered as in the question (blank 3 stays "Blank 3")."""
    gold = gold_blanks(item)
    return "\n".join(
        f"Blank {i + 1}\n  reference answer: {gold[i]}\n  candidate answer: {blanks[i].strip()}"
        for i in indices
    )


@dataclass
class _Asked:
    """The outcome of one decision (one item, or one blank): verdicts, or why there are none."""

    verdicts: list[bool] | None
    reply: str | None
    error: str | None
    responses: list[GenerateResponse]


def _usage_sum(responses: list[GenerateResponse]) -> Usage | None:
    if not responses:
        return None

    def total(name: str) -> int | None:
        values = [getattr(r.usage, name) for r in responses if getattr(r.usage, name) is not None]
        return sum(values) if values else None

    return Usage(
        prompt_tokens=total("prompt_tokens"),
        completion_tokens=total("completion_tokens"),
        reasoning_tokens=total("reasoning_tokens"),
    )


class LLMBlankJudge:
    """Blank judge backed by any `ModelBackend` (a local vLLM Phi-3-mini, an API model, ...)."""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        max_attempts: int = 3,
        max_tokens: int = 1024,
        seed: int = 0,
        prompt: str | None = None,
        name: str | None = None,
        protocol: JudgeProtocol = "per_item",
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if protocol not in JUDGE_PROTOCOLS:
            raise ValueError(f"judge protocol must be one of {', '.join(JUDGE_PROTOCOLS)}, got {protocol!r}")
        self.backend = backend
        self.protocol: JudgeProtocol = protocol
        self.max_attempts = max_attempts
        self.max_tokens = max_tokens
        self.budget = judge_budget(backend, max_tokens)
        self.seed = seed
        per_blank = protocol == "per_blank"
        self.template = (
            prompt if prompt is not None else load_prompt(SINGLE_PROMPT_FILE if per_blank else PROMPT_FILE)
        )
        # Fail now on a bad template.
        if per_blank:
            Template(self.template).substitute(question="", number="", reference="", candidate="")
        else:
            Template(self.template).substitute(question="", blanks="", count="")
        self.name = name or (f"llm-per-blank:{backend.name}" if per_blank else f"llm:{backend.name}")

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()

    def render(self, item: Item, blanks: list[str], indices: list[int]) -> str:
        if self.protocol == "per_blank":
            (index,) = indices
            return Template(self.template).substitute(
                question=item.question.strip(),
                number=index + 1,
                reference=gold_blanks(item)[index],
                candidate=blanks[index].strip(),
            )
        return Template(self.template).substitute(
            question=item.question.strip(), blanks=format_blanks(item, blanks, indices), count=len(indices)
        )

    def _request(
        self, messages: list[Message], item: Item, attempt: int, blank: int | None
    ) -> GenerateRequest:
        metadata: dict[str, Any] = {
            "purpose": "blank_judge",
            "item_id": item.id,
            "task": item.task,
            "attempt": attempt,
        }
        if blank is not None:
            metadata["blank"] = blank + 1
        return GenerateRequest(
            messages=messages,
            temperature=0.0,
            max_tokens=self.budget.max_tokens,
            thinking=self.budget.thinking,
            seed=self.seed,
            metadata=metadata,
        )

    async def _ask(self, item: Item, blanks: list[str], indices: list[int], blank: int | None) -> _Asked:
        """Ask until the reply holds `len(indices)` verdicts, at most `max_attempts` times."""
        messages = [Message(role="user", content=[TextPart(text=self.render(item, blanks, indices))])]
        responses: list[GenerateResponse] = []
        problem = ""
        reply: str | None = None
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = await ask_judge(self.backend, self._request(messages, item, attempt, blank))
            except BackendError as exc:
                return _Asked(None, reply, f"judge request failed: {exc}", responses)
            responses.append(response)
            reply = response.text
            if cut_before_answering(response):
                return _Asked(None, reply, cut_message(response), responses)
            try:
                return _Asked(parse_verdicts(reply, len(indices)), reply, None, responses)
            except VerdictError as exc:
                problem = str(exc)
            wanted = "one boolean" if len(indices) == 1 else f"exactly {len(indices)} booleans"
            messages = [
                *messages,
                Message(role="assistant", content=[TextPart(text=reply or "")]),
                Message(
                    role="user",
                    content=[
                        TextPart(
                            text=f"Your reply could not be used: {problem}. Reply with only the JSON "
                            f'object {{"verdicts": [...]}} holding {wanted}.'
                        )
                    ],
                ),
            ]
        return _Asked(
            None, reply, f"no usable verdicts after {self.max_attempts} attempt(s): {problem}", responses
        )

    async def judge(self, item: Item, blanks: list[str]) -> Judgment:
        indices = blanks_to_decide(item, blanks)
        if not indices:  # nothing filled in: every blank is wrong, no need to ask
            return Judgment(
                item_id=item.id,
                task=item.task,
                judge=self.name,
                verdicts=merge_verdicts(item, {}),
                n_requests=0,
            )
        if self.protocol == "per_blank":
            asked = list(await asyncio.gather(*(self._ask(item, blanks, [i], i) for i in indices)))
        else:
            asked = [await self._ask(item, blanks, indices, None)]
        responses = [response for outcome in asked for response in outcome.responses]
        last = responses[-1] if responses else None
        failed = next((outcome for outcome in asked if outcome.verdicts is None), None)
        record: dict[str, Any] = {
            "finish_reason": None if last is None else last.finish_reason,
            "usage": _usage_sum(responses),
            "sent": {} if last is None else dict(last.sent),
            "n_requests": len(responses),
        }
        raw: str | None
        if self.protocol == "per_blank":
            raw = "\n".join(
                f"Blank {i + 1}: {outcome.reply}" for i, outcome in zip(indices, asked, strict=True)
            )
        else:
            raw = asked[0].reply
        if failed is not None:
            if failed.responses:
                record["finish_reason"] = failed.responses[-1].finish_reason
                record["sent"] = dict(failed.responses[-1].sent)
            return Judgment(
                item_id=item.id, task=item.task, judge=self.name, raw=raw, error=failed.error, **record
            )
        decided = [verdict for outcome in asked for verdict in outcome.verdicts or []]
        verdicts = merge_verdicts(item, dict(zip(indices, decided, strict=True)))
        return Judgment(
            item_id=item.id, task=item.task, judge=self.name, verdicts=verdicts, raw=raw, **record
        )

    def describe(self) -> dict[str, Any]:
        granularity = (
            "one request per filled blank (the paper's protocol)"
            if self.protocol == "per_blank"
            else "one request per item deciding every filled blank"
        )
        described: dict[str, Any] = {
            "name": self.name,
            "kind": "llm",
            "offline": False,
            "backend": self.backend.describe(),
            "prompt": self.template,
            "prompt_sha256": self.prompt_sha256,
            "temperature": 0.0,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "max_attempts": self.max_attempts,
            "granularity": granularity,
        }
        # Only what differs from the original per-item judge joins the description (and so the
        # judge's identity): judgments made before these settings existed stay valid.
        if self.budget.describe()["reasoning_budget"] or self.budget.thinking is not None:
            described["budget"] = self.budget.describe()
        if self.protocol != "per_item":
            described["protocol"] = self.protocol
        return described

    def manifest_settings(self) -> JudgeSettings:
        return llm_judge_settings(self.name, self.backend, self.template)
