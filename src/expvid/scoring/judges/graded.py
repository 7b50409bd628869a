"""SFE's judge: an LLM scores a prediction from 0 (entirely incorrect) to 10 (highly correct).

The prompt is SFE's appendix E judge prompt as the SFE task of lmms-eval sends it
(`prompts/sfe_judge.txt`, with the question, gold answer and prediction in code fences) after the
system message "You are a helpful and precise assistant for checking the correctness of the
answer." (`prompts/sfe_judge_system.txt`); temperature 0, at most 20 new tokens (the official
`get_chat_response(..., max_tokens=20)`: the reply is to be a bare score). The paper's judge is
GPT-4o-2024-11-20. Headline = mean score x 10. A judge that needs room to reason (a reasoning
model) can be given more with `max_tokens`; a reply cut off before its score is a judge failure.

Reading the reply - where the official scorer is faulty (formats.md), this does it right:
- official: the first run of digits anywhere in the reply ("On a 0-10 scale: 4" gives 0), and a
  failed call or a reply with no digits silently scores 0;
- here: the reply (think blocks removed) must BE a score 0-10 ("7", "**7**", "7/10", "Score: 7"),
  or its last line must; otherwise, and for any failed call, the Judgment records an error and
  the item counts as a judge failure (scored 0 in the headline, counted, and excluded from
  `score_judged_only`). `official_score_parse` reproduces the official reading for comparison.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from typing import Any

from expvid.models.types import Message, ModelBackend, TextPart
from expvid.schema import JudgeSettings, Judgment
from expvid.scoring.extraction.reasoning import split_reasoning
from expvid.scoring.judges.base import ask_graded_judge, llm_judge_settings
from expvid.scoring.judges.calls import judge_budget

TEMPLATE_FILE = "sfe_judge.txt"
SYSTEM_FILE = "sfe_judge_system.txt"
JUDGE_MAX_TOKENS = 20  # the official judge call
_SCORE = re.compile(
    r"^[\s*_#]*(?:(?:final\s+)?(?:score|rating|judgement|judgment)\s*[:：=]?\s*)?[*_\s]*(\d{1,2})(?:\s*/\s*10)?[\s*_.]*$",
    re.IGNORECASE,
)
_FIRST_DIGITS = re.compile(r"(\d+)")


class GradedParseError(ValueError):
    """The judge's reply is not a score from 0 to 10."""


def load_text(name: str) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


def parse_zero_to_ten(reply: str | None) -> int:
    """The 0-10 score a reply states; `GradedParseError` when it states none (or several lines do not)."""
    if reply is None or not reply.strip():
        raise GradedParseError("empty reply")
    answer, _reasoning = split_reasoning(reply)
    if not answer:
        raise GradedParseError("the reply holds only reasoning")
    candidates = [answer.strip(), answer.strip().splitlines()[-1]]
    for text in candidates:
        match = _SCORE.match(text)
        if match:
            value = int(match.group(1))
            if not 0 <= value <= 10:
                raise GradedParseError(f"score {value} is outside 0-10")
            return value
    shown = answer.strip().replace("\n", " ")
    raise GradedParseError(f"no 0-10 score in the reply: {shown[:80]!r}")


def official_score_parse(reply: str | None) -> int:
    """The official aggregation's reading: the first digits anywhere, 0 when there are none."""
    match = _FIRST_DIGITS.search(str(reply or ""))
    return int(match.group(1)) if match else 0


def render_prompt(template: str, *, question: str, answer: str, prediction: str) -> str:
    return template.replace("{question}", question).replace("{answer}", answer).replace("{pred}", prediction)


class GradedJudge:
    """SFE's 0-10 LLM judge behind any `ModelBackend`."""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        max_tokens: int = JUDGE_MAX_TOKENS,
        seed: int = 0,
        template: str | None = None,
        system: str | None = None,
        name: str | None = None,
    ) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        #: The official limit for a model that answers at once; room to reason for one that does not.
        self.budget = judge_budget(backend, max_tokens)
        self.seed = seed
        self.template = template if template is not None else load_text(TEMPLATE_FILE)
        self.system = system if system is not None else load_text(SYSTEM_FILE)
        self.name = name or f"sfe-0-10:{backend.name}"

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(f"{self.system}\x00{self.template}".encode()).hexdigest()

    async def decide(
        self, *, item_id: str, task: str, question: str, answer: str, prediction: str
    ) -> Judgment:
        user = render_prompt(self.template, question=question, answer=answer, prediction=prediction)
        return await ask_graded_judge(
            self.backend,
            judge=self.name,
            item_id=item_id,
            task=task,
            messages=[
                Message(role="system", content=[TextPart(text=self.system)]),
                Message(role="user", content=[TextPart(text=user)]),
            ],
            max_tokens=self.budget.max_tokens,
            thinking=self.budget.thinking,
            seed=self.seed,
            purpose="sfe_judge",
            parse=parse_zero_to_ten,
            parse_errors=(GradedParseError,),
        )

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "name": self.name,
            "kind": "llm",
            "offline": False,
            "protocol": "SFE appendix E judge, 0-10; headline = mean x 10",
            "backend": self.backend.describe(),
            "system": self.system,
            "prompt": self.template,
            "prompt_sha256": self.prompt_sha256,
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        if self.budget.thinking is not None:  # a reasoning judge: its budget joins its identity
            described["budget"] = self.budget.describe()
        return described

    def manifest_settings(self) -> JudgeSettings:
        return llm_judge_settings(
            self.name, self.backend, f"[system]\n{self.system}\n[user]\n{self.template}"
        )
