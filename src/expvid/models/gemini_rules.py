"""What a Gemini model accepts for its thinking, as far as it is known before the first request, and
what its 400s teach.

Google's thinking guide (ai.google.dev/gemini-api/docs/thinking, "set budget"):

- Gemini 2.5 Pro: `thinkingBudget` 128-32768 or -1 (dynamic); thinking cannot be turned off.
  Budget 0 is answered with HTTP 400 INVALID_ARGUMENT "Budget 0 is invalid. This model only works
  in thinking mode." (Vertex AI: "... The model does not support setting thinking_budget to 0").
- Gemini 2.5 Flash: 0-24576 or -1; 0 turns thinking off.
- Gemini 2.5 Flash-Lite: 512-24576, 0 or -1; it does not think unless asked.
- A budget outside the range: 400 "The thinking budget (52428) is invalid."
- Gemini 2.0 and 1.5 models have no thinking: a thinking config is not sent to them.

So `--no-thinking` on Gemini 2.5 Pro sends the minimum budget (128), and a budget outside a known
range is moved to its nearest end; each such change is recorded in the prediction's `sent`
(`thinking_budget` as sent, and why under `not_sent.thinking`) and noted under every report. A model
these rules do not know (a newer Gemini, a proxy) is learned from its own 400, once per backend:
"only works in thinking mode" -> its minimum budget is not 0 (the smallest positive budget any
Gemini has, 128, is sent instead); "thinking budget (N) is invalid" -> the model decides
(dynamic, -1); "thinking is not supported / not enabled" -> no thinking config at all.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Literal

from expvid.models.types import ThinkingConfig, field_values

#: The smallest positive budget of any Gemini thinking model (2.5 Pro): sent when a model says it
#: cannot stop thinking and no range is known.
SMALLEST_MINIMUM = 128


@dataclass(frozen=True)
class GeminiThinking:
    """Thinking-budget rules of one model."""

    family: str
    #: Inclusive range of positive budgets; None: no thinking at all (no config is sent).
    budget_range: tuple[int, int] | None
    can_disable: bool

    def describe(self) -> dict[str, object]:
        return field_values(self)


_PRO_25 = re.compile(r"^gemini-2\.5-pro")
_FLASH_LITE_25 = re.compile(r"^gemini-2\.5-flash-lite")
_FLASH_25 = re.compile(r"^gemini-2\.5-flash")
_NO_THINKING = re.compile(r"^gemini-(1\.\d|2\.0)(?!.*thinking)")


def gemini_thinking(model: str) -> GeminiThinking | None:
    """The known rules for `model` (`models/` prefixes and case ignored), or None when unknown."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if _PRO_25.match(name):
        return GeminiThinking("gemini-2.5-pro", (128, 32768), can_disable=False)
    if _FLASH_LITE_25.match(name):
        return GeminiThinking("gemini-2.5-flash-lite", (512, 24576), can_disable=True)
    if _FLASH_25.match(name):
        return GeminiThinking("gemini-2.5-flash", (1, 24576), can_disable=True)
    if _NO_THINKING.match(name):
        return GeminiThinking("gemini-no-thinking", None, can_disable=True)
    return None


@dataclass(frozen=True)
class BudgetChoice:
    """The budget to send (None: no thinking config) and why it is not what was asked (or None)."""

    budget: int | None
    reason: str | None = None


def choose_budget(thinking: ThinkingConfig, rules: GeminiThinking | None, model: str) -> BudgetChoice:
    """The `thinkingBudget` for a request's thinking setting under the model's rules."""
    if not thinking.enabled or thinking.budget_tokens == 0:
        asked = 0
    elif thinking.budget_tokens is None:
        asked = -1  # the model decides
    else:
        asked = thinking.budget_tokens
    if rules is None:
        return BudgetChoice(asked)
    if rules.budget_range is None:
        return BudgetChoice(None, f"{model} has no thinking; no thinking config was sent")
    low, high = rules.budget_range
    if asked == 0:
        if rules.can_disable:
            return BudgetChoice(0)
        return BudgetChoice(low, f"{model} cannot turn thinking off; sent its minimum thinking budget {low}")
    if asked == -1:
        return BudgetChoice(-1)
    if asked < low:
        return BudgetChoice(low, f"thinking budget {asked} is below {model}'s minimum; sent {low}")
    if asked > high:
        return BudgetChoice(high, f"thinking budget {asked} is above {model}'s maximum; sent {high}")
    return BudgetChoice(asked)


Learned = Literal["no_disable", "dynamic", "no_thinking"]

_NO_DISABLE = re.compile(r"only works in thinking mode|does not support setting thinking_budget to 0", re.I)
_BAD_BUDGET = re.compile(r"thinking budget\s*\(?-?\d+\)?\s*is invalid|thinking_budget is out of range", re.I)
_NO_THINKING_SUPPORT = re.compile(r"thinking is not (supported|enabled)|does not support thinking", re.I)


def learned_from(message: str) -> Learned | None:
    """What a 400's message says about the model's thinking, or None when it is about something else."""
    if _NO_DISABLE.search(message):
        return "no_disable"
    if _BAD_BUDGET.search(message):
        return "dynamic"
    if _NO_THINKING_SUPPORT.search(message):
        return "no_thinking"
    return None


class LearnedThinking:
    """What this backend's 400s taught about its model's thinking budget (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._learned: dict[Learned, str] = {}

    def learn(self, lesson: Learned, message: str) -> bool:
        """Remember a lesson; False when it was already known (the 400 is then final)."""
        with self._lock:
            if lesson in self._learned:
                return False
            self._learned[lesson] = message
            return True

    def adjust(self, choice: BudgetChoice) -> BudgetChoice:
        """`choice` after what the server said."""
        with self._lock:
            learned = dict(self._learned)
        budget = choice.budget
        if budget is None:
            return choice
        if "no_thinking" in learned:
            return BudgetChoice(None, f"the server refused a thinking config: {learned['no_thinking']}")
        if budget == 0 and "no_disable" in learned:
            return BudgetChoice(
                SMALLEST_MINIMUM,
                f"the server refused to turn thinking off ({learned['no_disable']}); sent {SMALLEST_MINIMUM}",
            )
        if budget > 0 and "dynamic" in learned:
            return BudgetChoice(
                -1, f"the server refused budget {budget} ({learned['dynamic']}); sent -1 (dynamic)"
            )
        return choice

    def describe(self) -> dict[str, str]:
        with self._lock:
            return {str(lesson): message for lesson, message in self._learned.items()}
