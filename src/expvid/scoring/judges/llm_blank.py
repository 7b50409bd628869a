"""The level-3 judge of the paper, rebuilt: an LLM decides every blank of an item in one call.

The paper used Phi-3-mini "per blank" and never published its prompt, so the prompt is ours
(prompts/blank_judge.txt); its text and sha256 go into the run manifest through `describe()`.
One call per item sees the whole question, which helps with blanks that only make sense
together, and costs a fraction of per-blank calls.

Determinism: temperature 0 and a fixed seed; retries change the request (they append the
rejected reply and what was wrong with it), so a response cache in the backend cannot hand back
the same nonsense forever, and the same inputs always produce the same sequence of requests.
Failure is explicit: a backend error, or nonsense after `max_attempts` replies, gives a
`Judgment` with `error` set and no verdicts - it is counted as a judge failure, never as zeros.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from string import Template
from typing import Any

from expvid.models.types import BackendError, GenerateRequest, Message, ModelBackend, TextPart
from expvid.schema import Item, JudgeSettings, Judgment
from expvid.scoring.judges.base import blanks_to_decide, gold_blanks, llm_judge_settings, merge_verdicts
from expvid.scoring.judges.verdicts import VerdictError, parse_verdicts

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
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.backend = backend
        self.max_attempts = max_attempts
        self.max_tokens = max_tokens
        self.seed = seed
        self.template = prompt if prompt is not None else load_prompt()
        Template(self.template).substitute(question="", blanks="", count="")  # fail now on a bad template
        self.name = name or f"llm:{backend.name}"

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()

    def render(self, item: Item, blanks: list[str], indices: list[int]) -> str:
        return Template(self.template).substitute(
            question=item.question.strip(), blanks=format_blanks(item, blanks, indices), count=len(indices)
        )

    def _request(self, messages: list[Message], item: Item, attempt: int) -> GenerateRequest:
        return GenerateRequest(
            messages=messages,
            temperature=0.0,
            max_tokens=self.max_tokens,
            seed=self.seed,
            metadata={"purpose": "blank_judge", "item_id": item.id, "task": item.task, "attempt": attempt},
        )

    async def judge(self, item: Item, blanks: list[str]) -> Judgment:
        indices = blanks_to_decide(item, blanks)
        if not indices:  # nothing filled in: every blank is wrong, no need to ask
            return Judgment(
                item_id=item.id, task=item.task, judge=self.name, verdicts=merge_verdicts(item, {})
            )
        messages = [Message(role="user", content=[TextPart(text=self.render(item, blanks, indices))])]
        problem = ""
        reply: str | None = None
        for attempt in range(1, self.max_attempts + 1):
            try:
                response = await self.backend.generate(self._request(messages, item, attempt))
            except BackendError as exc:
                return Judgment(
                    item_id=item.id, task=item.task, judge=self.name, error=f"judge request failed: {exc}"
                )
            reply = response.text
            try:
                decided = parse_verdicts(reply, len(indices))
            except VerdictError as exc:
                problem = str(exc)
                messages = [
                    *messages,
                    Message(role="assistant", content=[TextPart(text=reply or "")]),
                    Message(
                        role="user",
                        content=[
                            TextPart(
                                text=f"Your reply could not be used: {problem}. Reply with only the JSON "
                                f'object {{"verdicts": [...]}} holding exactly {len(indices)} booleans.'
                            )
                        ],
                    ),
                ]
                continue
            verdicts = merge_verdicts(item, dict(zip(indices, decided, strict=True)))
            return Judgment(item_id=item.id, task=item.task, judge=self.name, verdicts=verdicts, raw=reply)
        return Judgment(
            item_id=item.id,
            task=item.task,
            judge=self.name,
            raw=reply,
            error=f"no usable verdicts after {self.max_attempts} attempt(s): {problem}",
        )

    def describe(self) -> dict[str, Any]:
        return {
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
            "granularity": "one request per item deciding every filled blank",
        }

    def manifest_settings(self) -> JudgeSettings:
        return llm_judge_settings(self.name, self.backend, self.template)
