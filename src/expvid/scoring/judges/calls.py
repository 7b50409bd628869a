"""How every LLM judge asks its backend: a token budget that fits the model, and what came back kept.

Judges were written for chat models that answer at once: official settings give them as few as
20 or 256 new tokens (our blank judge: 1,024). A reasoning model (OpenAI o-series,
gpt-5, deepseek-reasoner, Gemini 2.5 Pro) spends its completion tokens on hidden reasoning first;
with such a budget the reply is empty with `finish_reason: length`, and every item's judgement
fails. So:

- the backend's own parameter rules apply to judges exactly as to evaluated models (they are built
  by the same `create_backend`: `max_completion_tokens`, no temperature, 400-driven fallbacks);
- a judge backend known to reason by default (`backend.reasoning_model`) is given
  `REASONING_JUDGE_TOKENS` and a low reasoning effort (`REASONING_JUDGE_THINKING`: 2,048 tokens of
  thinking, which `param_rules` maps to effort "low" where the model has it), recorded in the
  judge's description (and so in its identity: judgments made under another budget are redone);
- a reply cut by the token limit before any answer text (a reasoning model the rules do not know,
  e.g. a vLLM server of a thinking model) is asked once more with a larger budget
  (`escalated_budget`), never three times with the same one;
- every judgment records the finish reason and token usage of the reply it was made from, so a
  judge failure says why ("cut by the token limit after 1,024 reasoning tokens").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from expvid.models.types import GenerateRequest, GenerateResponse, ModelBackend, ThinkingConfig
from expvid.schema import Usage

#: Completion tokens for a judge that reasons by default: room for its reasoning and the short answer.
#: (OpenAI's reasoning guide advises reserving about 25,000 for hard problems; judging one answer at
#: low effort uses a few hundred to a few thousand.)
REASONING_JUDGE_TOKENS = 16384
#: The most a judge is ever given after escalations.
MAX_JUDGE_TOKENS = 65536
#: Reasoning for judges that reason anyway: a low effort (maps to "low" on OpenAI, 2,048 on Gemini).
REASONING_JUDGE_THINKING = ThinkingConfig(enabled=True, budget_tokens=2048)
#: Finish reasons that mean "the token limit was reached", as the providers spell them.
LENGTH_REASONS = frozenset({"length", "max_tokens", "MAX_TOKENS"})


def innermost_backend(backend: Any) -> Any:
    """The backend that really talks to the model (through blind: and vllm: wrappers)."""
    for attribute in ("inner", "client"):
        wrapped = getattr(backend, attribute, None)
        if wrapped is not None and hasattr(wrapped, "generate"):
            return innermost_backend(wrapped)
    return backend


def reasons_by_default(backend: ModelBackend) -> bool:
    """Whether the judge's model is known to spend output tokens on reasoning by default."""
    return bool(getattr(innermost_backend(backend), "reasoning_model", False))


@dataclass(frozen=True)
class JudgeBudget:
    """The token limit and thinking setting one judge sends with every request."""

    max_tokens: int
    thinking: ThinkingConfig | None
    #: The official limit the budget was derived from (e.g. 20, 256; ours 1,024).
    official_max_tokens: int

    def describe(self) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens,
            "official_max_tokens": self.official_max_tokens,
            "thinking": None if self.thinking is None else self.thinking.model_dump(),
            "reasoning_budget": self.max_tokens != self.official_max_tokens,
        }


def judge_budget(backend: ModelBackend, official_max_tokens: int) -> JudgeBudget:
    """The official limit for a model that answers at once; a reasoning model's budget otherwise."""
    if reasons_by_default(backend):
        return JudgeBudget(
            max(official_max_tokens, REASONING_JUDGE_TOKENS), REASONING_JUDGE_THINKING, official_max_tokens
        )
    return JudgeBudget(official_max_tokens, None, official_max_tokens)


def cut_before_answering(response: GenerateResponse) -> bool:
    """The reply reached the token limit with no answer text: the budget went to reasoning."""
    return response.finish_reason in LENGTH_REASONS and not (response.text or "").strip()


def escalated_budget(response: GenerateResponse, max_tokens: int) -> int | None:
    """A larger budget after a reply cut before answering, or None when there is none left.

    Four times the last one, and at least `REASONING_JUDGE_TOKENS` when the reply shows reasoning
    (reasoning text or reasoning tokens), capped at `MAX_JUDGE_TOKENS`.
    """
    if max_tokens >= MAX_JUDGE_TOKENS:
        return None
    reasoned = bool(response.reasoning) or bool(response.usage.reasoning_tokens)
    wanted = max(max_tokens * 4, REASONING_JUDGE_TOKENS if reasoned else 0)
    return min(wanted, MAX_JUDGE_TOKENS)


async def ask_judge(backend: ModelBackend, request: GenerateRequest) -> GenerateResponse:
    """`backend.generate(request)`; a reply cut by the token limit before any answer is asked again
    with a larger budget (at most twice). The last reply is returned, cut or not."""
    response = await backend.generate(request)
    for _ in range(2):
        if not cut_before_answering(response):
            break
        larger = escalated_budget(response, request.max_tokens)
        if larger is None:
            break
        request = request.model_copy(update={"max_tokens": larger})
        response = await backend.generate(request)
    return response


def cut_message(response: GenerateResponse) -> str:
    """Why a judge reply has no answer: the limit reached while reasoning, with the counts."""
    usage: Usage = response.usage
    spent = f" after {usage.reasoning_tokens} reasoning token(s)" if usage.reasoning_tokens else ""
    limit = response.sent.get("max_tokens")
    where = f" of {limit}" if limit else ""
    return (
        f"the judge's reply was cut by its token limit{where} (finish_reason: {response.finish_reason}){spent} "
        "before any answer; give the judge more tokens or a lower reasoning effort"
    )


def reply_record(response: GenerateResponse) -> dict[str, Any]:
    """What a judgment keeps of the reply it was made from (finish reason, usage, what was sent)."""
    return {
        "finish_reason": response.finish_reason,
        "usage": response.usage,
        "sent": dict(response.sent),
    }
