"""Graded LLM judges: a text-only LLM scores one answer on a suite's scale (0-2, 0-10, ...).

What every such judge shares lives here; what makes one paper's judge lives in its suite's package
(the prompt texts, how they are filled, how the reply is read, the official token limit):

- `GradedLLMJudge` sends a suite's filled prompt (a user text, optionally after a system text) at
  temperature 0 and reads the reply with the suite's parser. A failed call, a reply cut before its
  score and a reply the parser cannot read are judge failures (`Judgment.error`, counted), never a
  zero. The token budget fits the judge model (`calls.judge_budget`: the official limit for a model
  that answers at once, room to reason for one that reasons by default). Its description (and so
  the identity of its judgments) holds the prompts and their sha256, the backend and the budget.
- `parse_scale_score` is a strict reader for judges asked to reply with a bare score: the reply
  (think blocks removed) must BE a score on the scale ("7", "**7**", "7/10", "Score: 7"), or its
  last line must; anything else raises `GradedParseError` saying why.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from expvid.models.types import ModelBackend, chat_messages
from expvid.schema import JudgeSettings, Judgment
from expvid.scoring.extraction.reasoning import split_reasoning
from expvid.scoring.judges.base import ask_graded_judge, llm_judge_settings
from expvid.scoring.judges.calls import judge_budget

#: A reply parser: the judge's text -> its score; raises one of the judge's `parse_errors` otherwise.
ReplyParser = Callable[[str | None], float]


class GradedParseError(ValueError):
    """The judge's reply is not a score on its scale."""


@cache
def _score_line(top: int) -> re.Pattern[str]:
    return re.compile(
        r"^[\s*_#]*(?:(?:final\s+)?(?:score|rating|judgement|judgment)\s*[:：=]?\s*)?[*_\s]*(\d{1,"
        + str(len(str(top)))
        + r"})(?:\s*/\s*"
        + str(top)
        + r")?[\s*_.]*$",
        re.IGNORECASE,
    )


def parse_scale_score(reply: str | None, top: int) -> int:
    """The score 0..`top` a reply states; `GradedParseError` when it states none (or its lines do not)."""
    if reply is None or not reply.strip():
        raise GradedParseError("empty reply")
    answer, _reasoning = split_reasoning(reply)
    if not answer:
        raise GradedParseError("the reply holds only reasoning")
    pattern = _score_line(top)
    for text in (answer.strip(), answer.strip().splitlines()[-1]):
        match = pattern.match(text)
        if match:
            value = int(match.group(1))
            if not 0 <= value <= top:
                raise GradedParseError(f"score {value} is outside 0-{top}")
            return value
    shown = answer.strip().replace("\n", " ")
    raise GradedParseError(f"no 0-{top} score in the reply: {shown[:80]!r}")


class GradedLLMJudge:
    """An LLM judge with a suite's fixed prompt texts and reply parser (see the module docstring).

    A suite subclasses it (or wraps it) with a `decide(...)` that fills its template from the item
    and calls `ask`. `described` adds protocol facts to the description (e.g. that the judge never
    sees a frame); `purpose` labels its requests in caches and logs.
    """

    def __init__(
        self,
        backend: ModelBackend,
        *,
        name: str,
        protocol: str,
        template: str,
        parse: ReplyParser,
        parse_errors: tuple[type[Exception], ...],
        max_tokens: int,
        system: str | None = None,
        seed: int = 0,
        purpose: str = "judge",
        described: Mapping[str, Any] | None = None,
    ) -> None:
        self.backend = backend
        self.name = name
        self.protocol = protocol
        self.template = template
        self.system = system
        self.parse = parse
        self.parse_errors = parse_errors
        self.max_tokens = max_tokens
        #: The official limit for a model that answers at once; room to reason for one that does not.
        self.budget = judge_budget(backend, max_tokens)
        self.seed = seed
        self.purpose = purpose
        self.described = dict(described or {})

    @property
    def prompt_sha256(self) -> str:
        text = self.template if self.system is None else f"{self.system}\x00{self.template}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    async def ask(self, *, item_id: str, task: str, user: str) -> Judgment:
        """One judge call with the filled user text (after the system text, when there is one)."""
        return await ask_graded_judge(
            self.backend,
            judge=self.name,
            item_id=item_id,
            task=task,
            messages=chat_messages(user, system=self.system),
            max_tokens=self.budget.max_tokens,
            thinking=self.budget.thinking,
            seed=self.seed,
            purpose=self.purpose,
            parse=self.parse,
            parse_errors=self.parse_errors,
        )

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "name": self.name,
            "kind": "llm",
            "offline": False,
            "protocol": self.protocol,
            "backend": self.backend.describe(),
            **({"system": self.system} if self.system is not None else {}),
            "prompt": self.template,
            "prompt_sha256": self.prompt_sha256,
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            **self.described,
        }
        if self.budget.thinking is not None:  # a reasoning judge: its budget joins its identity
            described["budget"] = self.budget.describe()
        return described

    def manifest_settings(self) -> JudgeSettings:
        prompt = self.template if self.system is None else f"[system]\n{self.system}\n[user]\n{self.template}"
        return llm_judge_settings(self.name, self.backend, prompt)
