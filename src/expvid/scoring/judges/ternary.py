"""ProMQA's judge: a text-only LLM decides 0 (unmatch), 1 (partial match) or 2 (match).

The prompt is the official "ternary-step" template (`prompts/promqa_ternary_step.txt`), assembled
exactly as the official `get_text_content_evaluation` assembles the components of its
`templates.yaml` (prefix, ternary option, default note, step note, task, one newline between
each): the judge sees the question, the gold answers, the prediction and the steps the user has
performed WITH their ground-truth error tags, never a frame. Placeholders are filled with the
official chain of `str.replace` calls in the official order, and the text is stripped before it
is sent. Official settings: temperature 0, at most 256 new tokens, GPT-4o (gpt-4o-2024-08-06).

Reading the reply: the official code splits on "[Judge]" and keeps whatever follows; a reply
without exactly one "[Judge]" is dropped with a log line. Here the judge is the digit 0, 1 or 2
after the LAST "[Judge]" (optionally followed by ":" or wrapped in brackets or markdown); anything
else is a judge failure, recorded as such and never scored as 0. Score = mean(judge) x 50.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from expvid.models.types import Message, ModelBackend, TextPart
from expvid.schema import JudgeSettings, Judgment
from expvid.scoring.judges.base import ask_graded_judge, llm_judge_settings
from expvid.scoring.judges.calls import judge_budget

TEMPLATE_FILE = "promqa_ternary_step.txt"
JUDGE_MAX_TOKENS = 256  # official evaluate.py default
_JUDGE = re.compile(r"\[Judge\][\s*_:：\-]*[\[(]?\s*([0-2])(?![0-9.])")


class TernaryParseError(ValueError):
    """The judge's reply holds no "[Judge] N" with N in 0, 1, 2."""


def load_template(name: str = TEMPLATE_FILE) -> str:
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class PerformedStep:
    """A step the user performed, with its ground-truth error annotations (tag, description)."""

    description: str
    errors: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PerformedStep:
        errors = tuple(
            (str(e.get("tag", "")), str(e.get("description", ""))) for e in record.get("errors") or ()
        )
        return cls(str(record.get("description", "")), errors)


def format_steps(steps: Sequence[PerformedStep], with_errors: bool = True) -> str:
    """The official `format_steps`: "- step" lines, each error as "    - [tag] description"; stripped."""
    output = ""
    for step in steps:
        output += f"- {step.description}\n"
        if with_errors:
            for tag, description in step.errors:
                output += f"    - [{tag}] {description}\n"
    return output.strip()


def render_prompt(
    template: str,
    *,
    activity: str,
    steps: Sequence[PerformedStep],
    question: str,
    gold_answers: Sequence[str],
    prediction: str,
) -> str:
    """The judge prompt, filled with the official replace chain and stripped as the official code sends it."""
    gold = "\n".join(f"- {answer}" for answer in gold_answers).strip()
    prompt = (
        template.replace("{activity_name}", activity)
        .replace("{step_information}", format_steps(steps, with_errors=True))
        .replace("{question}", f"- {question}")
        .replace("{gold_answer}", gold)
        .replace("{predicted_answer}", f"- {prediction}")
    )
    return prompt.strip()


def parse_ternary(reply: str | None) -> int:
    """The 0/1/2 after the last "[Judge]"; `TernaryParseError` saying why when there is none."""
    if not reply or not reply.strip():
        raise TernaryParseError("empty reply")
    found = _JUDGE.findall(reply)
    if not found:
        if "[Judge]" in reply:
            raise TernaryParseError('"[Judge]" is not followed by 0, 1 or 2')
        raise TernaryParseError('no "[Judge] N" in the reply')
    return int(found[-1])


def official_split(reply: str) -> str | None:
    """What the official `parse_feedback` keeps as the judge: the text after the only "[Judge]"."""
    parts = reply.split("[Judge]")
    if len(parts) != 2:
        return None
    return parts[1].strip()


class TernaryJudge:
    """ProMQA's LLM judge behind any `ModelBackend`; one request per prediction, temperature 0."""

    def __init__(
        self,
        backend: ModelBackend,
        *,
        max_tokens: int = JUDGE_MAX_TOKENS,
        seed: int = 0,
        template: str | None = None,
        name: str | None = None,
    ) -> None:
        self.backend = backend
        self.max_tokens = max_tokens
        #: The official limit for a model that answers at once; room to reason for one that does not.
        self.budget = judge_budget(backend, max_tokens)
        self.seed = seed
        self.template = template if template is not None else load_template()
        self.name = name or f"promqa-ternary:{backend.name}"

    @property
    def template_sha256(self) -> str:
        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()

    async def decide(
        self,
        *,
        item_id: str,
        task: str,
        activity: str,
        steps: Sequence[PerformedStep],
        question: str,
        gold_answers: Sequence[str],
        prediction: str,
    ) -> Judgment:
        prompt = render_prompt(
            self.template,
            activity=activity,
            steps=steps,
            question=question,
            gold_answers=gold_answers,
            prediction=prediction,
        )
        return await ask_graded_judge(
            self.backend,
            judge=self.name,
            item_id=item_id,
            task=task,
            messages=[Message(role="user", content=[TextPart(text=prompt)])],
            max_tokens=self.budget.max_tokens,
            thinking=self.budget.thinking,
            seed=self.seed,
            purpose="promqa_judge",
            parse=parse_ternary,
            parse_errors=(TernaryParseError,),
        )

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "name": self.name,
            "kind": "llm",
            "offline": False,
            "protocol": "ProMQA ternary-step judge (0 unmatch, 1 partial, 2 match); score = mean x 50",
            "backend": self.backend.describe(),
            "prompt": self.template,
            "prompt_sha256": self.template_sha256,
            "temperature": 0.0,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "sees_frames": False,
        }
        if self.budget.thinking is not None:  # a reasoning judge: its budget joins its identity
            described["budget"] = self.budget.describe()
        return described

    def manifest_settings(self) -> JudgeSettings:
        return llm_judge_settings(self.name, self.backend, self.template)
