"""ProMQA's judge: a text-only LLM decides 0 (unmatch), 1 (partial match) or 2 (match).

The prompt is the official "ternary-step" template (`prompts/judge_ternary_step.txt`), assembled
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
The call itself (budget, failures, description) is the shared `PaperJudge`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, ClassVar

from expvid.schema import Judgment
from expvid.scoring.judges.graded import GradedParseError
from expvid.suites.paper_judge import PaperJudge

TEMPLATE_FILE = "judge_ternary_step.txt"
JUDGE_MAX_TOKENS = 256  # official evaluate.py default
_JUDGE = re.compile(r"\[Judge\][\s*_:：\-]*[\[(]?\s*([0-2])(?![0-9.])")


class TernaryParseError(GradedParseError):
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


class TernaryJudge(PaperJudge):
    """ProMQA's LLM judge behind any `ModelBackend`; one request per prediction, temperature 0."""

    family = "promqa-ternary"
    protocol_text = "ProMQA ternary-step judge (0 unmatch, 1 partial, 2 match); score = mean x 50"
    official_max_tokens = JUDGE_MAX_TOKENS
    purpose_label = "promqa_judge"
    facts: ClassVar[Mapping[str, Any]] = {"sees_frames": False}

    def default_template(self) -> str:
        return load_template()

    def read_reply(self, reply: str | None) -> float:
        return parse_ternary(reply)

    @property
    def template_sha256(self) -> str:
        return self.prompt_sha256

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
        return await self.ask(item_id=item_id, task=task, user=prompt)
