"""The judge protocol for fill-in-the-blank items, and the bookkeeping every judge shares.

A judge returns one verdict per GOLD blank. Blanks the model did not fill (its list was shorter)
are wrong without asking anyone, extra answers are ignored, and an empty answer is wrong: those
rules live here so that the LLM judge and the offline judge cannot differ on them.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from expvid.schema import Item, Judgment


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
