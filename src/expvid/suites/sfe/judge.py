"""SFE's judge: an LLM scores a prediction from 0 (entirely incorrect) to 10 (highly correct).

The prompt is SFE's appendix E judge prompt as the SFE task of lmms-eval sends it
(`prompts/judge.txt`, with the question, gold answer and prediction in code fences) after the
system message "You are a helpful and precise assistant for checking the correctness of the
answer." (`prompts/judge_system.txt`); temperature 0, at most 20 new tokens (the official
`get_chat_response(..., max_tokens=20)`: the reply is to be a bare score). The paper's judge is
GPT-4o-2024-11-20. Headline = mean score x 10. A judge that needs room to reason (a reasoning
model) can be given more with `max_tokens`; a reply cut off before its score is a judge failure.

Reading the reply - where the official scorer is faulty (formats.md), this does it right:
- official: the first run of digits anywhere in the reply ("On a 0-10 scale: 4" gives 0), and a
  failed call or a reply with no digits silently scores 0;
- here: the reply (think blocks removed) must BE a score 0-10 ("7", "**7**", "7/10", "Score: 7"),
  or its last line must (`expvid.scoring.judges.graded.parse_scale_score`); otherwise, and for any
  failed call, the Judgment records an error and the item counts as a judge failure (scored 0 in
  the headline, counted, and excluded from `score_judged_only`). `official_score_parse`
  reproduces the official reading for comparison.
"""

from __future__ import annotations

import re

from expvid.schema import Judgment
from expvid.scoring.judges.graded import GradedParseError, parse_scale_score
from expvid.suites.paper_judge import PaperJudge
from expvid.suites.sfe.prompts import prompt_file

TEMPLATE_FILE = "judge.txt"
SYSTEM_FILE = "judge_system.txt"
JUDGE_MAX_TOKENS = 20  # the official judge call
SCALE_TOP = 10
_FIRST_DIGITS = re.compile(r"(\d+)")

__all__ = [
    "JUDGE_MAX_TOKENS",
    "GradedJudge",
    "GradedParseError",
    "official_score_parse",
    "parse_zero_to_ten",
    "render_prompt",
]


def load_text(name: str) -> str:
    return prompt_file(name)


def parse_zero_to_ten(reply: str | None) -> int:
    """The 0-10 score a reply states; `GradedParseError` when it states none (or several lines do not)."""
    return parse_scale_score(reply, SCALE_TOP)


def official_score_parse(reply: str | None) -> int:
    """The official aggregation's reading: the first digits anywhere, 0 when there are none."""
    match = _FIRST_DIGITS.search(str(reply or ""))
    return int(match.group(1)) if match else 0


def render_prompt(template: str, *, question: str, answer: str, prediction: str) -> str:
    return template.replace("{question}", question).replace("{answer}", answer).replace("{pred}", prediction)


class GradedJudge(PaperJudge):
    """SFE's 0-10 LLM judge behind any `ModelBackend`."""

    family = "sfe-0-10"
    protocol_text = "SFE appendix E judge, 0-10; headline = mean x 10"
    official_max_tokens = JUDGE_MAX_TOKENS
    purpose_label = "sfe_judge"

    def default_template(self) -> str:
        return load_text(TEMPLATE_FILE)

    def default_system(self) -> str:
        return load_text(SYSTEM_FILE)

    def read_reply(self, reply: str | None) -> float:
        return parse_zero_to_ten(reply)

    async def decide(
        self, *, item_id: str, task: str, question: str, answer: str, prediction: str
    ) -> Judgment:
        user = render_prompt(self.template, question=question, answer=answer, prediction=prediction)
        return await self.ask(item_id=item_id, task=task, user=user)
