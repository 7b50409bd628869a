"""Judges for the common case: one decision per answer, with the paper's own judge prompt.

`PromptedJudge` sends an LLM the messages a suite builds from its paper's judge prompt (a system
text and a user template with `{field}` slots the suite fills: question, gold answer, prediction)
and reads the reply with the suite's parser into a score on the suite's scale (1 for a
correct / incorrect judge). A failed request or a reply the parser cannot read is a judge failure
(`Judgment.error`, counted), never a silent zero.

`OfflineMatchJudge` stands in when no judge model is given: a multiple-choice answer is right when
the strict letter extraction reads the gold letter; a short open answer (the text after a reply's
last "answer is:" / "Answer:", else the reply) when it matches the gold one after normalisation,
states the same number (within 1 %), or its MiniLM embedding is close enough (`match`, cosine 0.8). It is labelled offline everywhere; its numbers are not a paper's.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable
from typing import Any

from expvid.models.types import ModelBackend, ResponseSchema, chat_messages
from expvid.schema import AnswerType, Item, JudgeSettings, Judgment
from expvid.scoring.extraction.choice import extract_choice
from expvid.scoring.judges.base import ask_graded_judge, llm_judge_settings
from expvid.scoring.judges.embeddings import MiniLMEmbedder, offline_judge_description
from expvid.scoring.judges.text_match import normalise, same_number

#: A reply parser: the judge's text -> its score; raises one of the judge's `parse_errors` otherwise.
ReplyParser = Callable[[str | None], float]

_FINAL = re.compile(
    r"(?:final answer is|answer)\s*[:：]\s*['\"*`]*(?:answer\s*[:：]\s*)?([^\n]+)", re.IGNORECASE
)
_SLOT = re.compile(r"\{(\w+)\}")


class JudgeReplyError(ValueError):
    """The judge's reply does not say what the protocol asks for."""


class PromptedJudge:
    """An LLM judge with a suite's prompt and reply parser (see the module docstring)."""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        name: str,
        protocol: str,
        parse: ReplyParser,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int = 0,
        parse_errors: tuple[type[Exception], ...] = (JudgeReplyError,),
        response_schema: ResponseSchema | None = None,
    ) -> None:
        self.backend = backend
        self.name = f"{name}:{backend.name}"
        self.protocol = protocol
        self.parse = parse
        self.parse_errors = parse_errors
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.seed = seed
        #: The JSON reply the protocol asks for, sent as structured output where the provider takes it.
        self.response_schema = response_schema
        #: Every (system, template) pair this judge has been asked with: its identity.
        self._prompts: dict[str, tuple[str, str]] = {}

    def remember(self, key: str, system: str, template: str) -> None:
        """Declare a prompt the judge uses (e.g. one per question type), so its identity covers it."""
        self._prompts[key] = (system, template)

    async def decide(
        self, *, item_id: str, task: str, system: str, template: str, fields: dict[str, str]
    ) -> Judgment:
        # one pass: a field's own text (a reply quoting "{answer}") is never substituted again
        user = _SLOT.sub(lambda match: fields.get(match.group(1), match.group(0)), template)
        return await ask_graded_judge(
            self.backend,
            judge=self.name,
            item_id=item_id,
            task=task,
            messages=chat_messages(user, system=system or None),
            max_tokens=self.max_tokens,
            seed=self.seed,
            purpose="judge",
            parse=self.parse,
            parse_errors=self.parse_errors,
            temperature=self.temperature,
            response_schema=self.response_schema,
        )

    @property
    def prompt_text(self) -> str:
        return "\n".join(
            f"[{key} system]\n{system}\n[{key} user]\n{template}"
            for key, (system, template) in sorted(self._prompts.items())
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": "llm",
            "offline": False,
            "protocol": self.protocol,
            "backend": self.backend.describe(),
            "prompts": {key: {"system": s, "user": t} for key, (s, t) in sorted(self._prompts.items())},
            "prompt_sha256": hashlib.sha256(self.prompt_text.encode()).hexdigest(),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            **(
                {"response_schema": self.response_schema.model_dump(mode="json")}
                if self.response_schema is not None
                else {}
            ),
        }

    def manifest_settings(self) -> JudgeSettings:
        return llm_judge_settings(self.name, self.backend, self.prompt_text)


class OfflineMatchJudge:
    """Correct (1) or not (0) without a judge model (see the module docstring)."""

    def __init__(
        self, *, name: str, offline_note: str, embedder: MiniLMEmbedder | None = None, match: float = 0.8
    ) -> None:
        self.name = name
        self.offline_note = offline_note
        self.embedder = embedder or MiniLMEmbedder()
        self.match = match

    async def decide(self, *, item: Item, prediction: str) -> Judgment:
        def verdict(correct: bool, why: str) -> Judgment:
            return Judgment(item_id=item.id, task=item.task, judge=self.name, score=float(correct), raw=why)

        if item.answer_type is AnswerType.CHOICE:
            found = extract_choice(prediction, item)
            letter = found.value if found.ok else "none"
            return verdict(found.ok and found.value == item.answer, f"letter {letter} vs gold {item.answer}")
        golds = item.answer if isinstance(item.answer, list) else [item.answer]
        answers = [str(gold) for gold in golds]
        prediction = final_answer(prediction)
        if not prediction.strip():
            return verdict(False, "empty prediction")
        if any(normalise(prediction) == normalise(gold) for gold in answers):
            return verdict(True, "normalised exact match")
        if any(same_number(prediction, gold) for gold in answers):
            return verdict(True, "numeric match")
        similarities = await asyncio.to_thread(self.embedder.similarity, [(prediction, g) for g in answers])
        best = max(similarities)
        return verdict(best >= self.match, f"best cosine similarity {best:.4f} (match at {self.match})")

    def describe(self) -> dict[str, Any]:
        return {**offline_judge_description(self.name), "threshold": self.match}

    def manifest_settings(self) -> JudgeSettings:
        return JudgeSettings(
            name=self.name, model="all-MiniLM-L6-v2 (offline)", threshold=self.match, offline=True
        )


def final_answer(text: str) -> str:
    """The answer a reasoned reply ends on ("... the final answer is: 'Answer: X'"), else the reply."""
    found = _FINAL.findall(text)
    return found[-1].strip().strip("'\"*`").strip() if found else text
