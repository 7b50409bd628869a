"""The judge protocol for fill-in-the-blank items, and the bookkeeping every judge shares.

A judge returns one verdict per GOLD blank. Blanks the model did not fill (its list was shorter)
are wrong without asking anyone, extra answers are ignored, and an empty answer is wrong: those
rules live here so that the LLM judge and the offline judge cannot differ on them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from expvid.models.types import (
    BackendError,
    GenerateRequest,
    Message,
    ModelBackend,
    ResponseSchema,
    ThinkingConfig,
)
from expvid.schema import Item, JudgeSettings, Judgment
from expvid.scoring.judges.calls import ask_judge, cut_before_answering, cut_message, reply_record


@runtime_checkable
class BlankJudge(Protocol):
    """Decides, blank by blank, whether a model's fill-in answers match the gold ones."""

    name: str

    async def judge(self, item: Item, blanks: list[str]) -> Judgment:
        """One verdict per gold blank, or a Judgment with `error` set (never a silent zero)."""
        ...

    def describe(self) -> dict[str, Any]:
        """Everything a run manifest needs to say how the judging was done."""
        ...


def gold_blanks(item: Item) -> list[str]:
    if not isinstance(item.answer, list) or not all(isinstance(a, str) for a in item.answer):
        raise ValueError(f"item {item.id} has no list of blank answers to judge against")
    return [str(a) for a in item.answer]


def blanks_to_decide(item: Item, blanks: list[str]) -> list[int]:
    """Indices of gold blanks that need a decision: the model gave a non-empty answer for them."""
    gold = gold_blanks(item)
    return [i for i in range(len(gold)) if i < len(blanks) and blanks[i].strip()]


def merge_verdicts(item: Item, decided: dict[int, bool]) -> list[bool]:
    """Full verdict list: decided blanks as decided, every other gold blank False."""
    return [decided.get(i, False) for i in range(len(gold_blanks(item)))]


async def ask_graded_judge(
    backend: ModelBackend,
    *,
    judge: str,
    item_id: str,
    task: str,
    messages: list[Message],
    max_tokens: int,
    seed: int | None,
    purpose: str,
    parse: Callable[[str | None], float],
    parse_errors: tuple[type[Exception], ...],
    thinking: ThinkingConfig | None = None,
    temperature: float = 0.0,
    response_schema: ResponseSchema | None = None,
) -> Judgment:
    """One judge call (temperature 0 unless a protocol says otherwise) whose reply `parse` reads
    into a graded score.

    A failed request and an unreadable reply both become a Judgment with `error` set (and the raw
    reply kept), so a judge failure is counted as one and never turns into a zero. A reply cut by
    the token limit before any answer is asked again with a larger budget (`calls.ask_judge`);
    the finish reason, usage and what was sent are recorded either way.
    """
    request = GenerateRequest(
        messages=messages,
        temperature=temperature,
        max_tokens=max_tokens,
        seed=seed,
        thinking=thinking,
        response_schema=response_schema,
        metadata={"purpose": purpose, "item_id": item_id, "task": task},
    )
    try:
        response = await ask_judge(backend, request)
    except BackendError as error:
        return Judgment(
            item_id=item_id, task=task, judge=judge, error=f"judge request failed: {error}", sent=error.sent
        )
    record = reply_record(response)
    if cut_before_answering(response):
        return Judgment(
            item_id=item_id, task=task, judge=judge, raw=response.text, error=cut_message(response), **record
        )
    try:
        value = parse(response.text)
    except parse_errors as error:
        return Judgment(
            item_id=item_id,
            task=task,
            judge=judge,
            raw=response.text,
            error=f"unparseable judge: {error}",
            **record,
        )
    return Judgment(item_id=item_id, task=task, judge=judge, score=float(value), raw=response.text, **record)


def llm_judge_settings(name: str, backend: ModelBackend, prompt: str) -> JudgeSettings:
    """Manifest entry for an LLM judge: its backend's model and endpoint (never its key) and prompt."""
    described = backend.describe()
    model = described.get("model")
    return JudgeSettings(
        name=name,
        model=str(model) if model is not None else None,
        endpoint=str(described.get("base_url") or described.get("endpoint") or "") or None,
        prompt=prompt,
        offline=False,
    )
