"""Offline baselines that need no model: `random`, `longest-option`, `first-option`.

They read only `request.hints` (the SHAPE of the expected answer, never its value) and reply in the
form a model would (`\\boxed{B}`, `\\boxed{12}`, `\\boxed{3, 4, 5}`, `\\boxed{unknown, unknown}`), so
their answers go through the same extraction and scoring as any model's: chance level is measured,
not assumed. On free-text and box questions `random` answers with the gold answer of another
question of the same task (`hints.chance_answers`, filled by the suite): a real chance baseline,
judged like any reply. When a baseline has no meaningful answer (no candidates at all) it says so in
plain words; that reply extracts to nothing and is scored as unanswered, never as a lucky guess.
"""

from __future__ import annotations

import hashlib
import random
from abc import ABC, abstractmethod
from typing import Any

from expvid.models.remote import check_image_cap
from expvid.models.stats import BackendStats
from expvid.models.types import AnswerHints, BackendError, GenerateRequest, GenerateResponse, TextPart
from expvid.schema import AnswerType, ErrorKind, Usage

UNKNOWN_BLANK = "unknown"


def boxed(values: list[str]) -> str:
    return "\\boxed{" + ", ".join(values) + "}"


def cannot_answer(name: str, hints: AnswerHints, why: str) -> str:
    return f"The {name} baseline cannot answer this {hints.answer_type.value} question: {why}."


def blanks_answer(hints: AnswerHints) -> str | None:
    """No baseline can fill a blank: every blank gets an explicit 'unknown'."""
    return boxed([UNKNOWN_BLANK] * hints.n_blanks) if hints.n_blanks > 0 else None


class OfflineBaseline(ABC):
    """Common plumbing: checks, counters, and a response shaped like a model's."""

    def __init__(self, name: str, *, max_images: int | None = None) -> None:
        self.name = name
        self.max_images = max_images
        self._stats = BackendStats(limit=1, max_limit=1)

    @abstractmethod
    def answer(self, hints: AnswerHints, request: GenerateRequest) -> str:
        """The reply text for one request."""

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        check_image_cap(request, self.max_images, self.name)
        if request.hints is None:
            self._stats.failures += 1
            item = request.metadata.get("item_id", "<no item_id>")
            raise BackendError(
                f"{self.name}: request for item {item} carries no answer hints; offline baselines need them",
                kind=ErrorKind.OTHER,
            )
        self._stats.requests += 1
        self._stats.successes += 1
        return GenerateResponse(
            text=self.answer(request.hints, request), finish_reason="stop", usage=Usage(), model=self.name
        )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "kind": "baseline", "max_images": self.max_images}

    def stats(self) -> BackendStats:
        return BackendStats(**self._stats.snapshot())

    async def aclose(self) -> None:
        return None


def _item_key(request: GenerateRequest) -> str:
    """The item id when the runner gave one; otherwise a hash of the prompt text (still deterministic)."""
    item_id = request.metadata.get("item_id")
    if item_id is not None:
        return f"item:{item_id}"
    texts = [p.text for m in request.messages for p in m.content if isinstance(p, TextPart)]
    return "text:" + hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()


class RandomBaseline(OfflineBaseline):
    """Uniform guesses, seeded per item and sample: same seed, item id and sample -> same answer, in any
    order or process. Sample 0 is seeded by the item alone, so a single-sample run never changes."""

    def __init__(self, seed: int = 0, *, explicit_seed: bool = False, max_images: int | None = None) -> None:
        super().__init__(f"random:{seed}" if explicit_seed else "random", max_images=max_images)
        self.seed = seed

    def rng_for(self, request: GenerateRequest) -> random.Random:
        key = f"{self.seed}\x00{_item_key(request)}"
        sample = int(request.metadata.get("sample", 0) or 0)
        if sample:  # pass@k: every sample its own draw
            key += f"\x00sample:{sample}"
        digest = hashlib.sha256(key.encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def answer(self, hints: AnswerHints, request: GenerateRequest) -> str:
        rng = self.rng_for(request)
        kind = hints.answer_type
        if kind == AnswerType.CHOICE:
            if not hints.options:
                return cannot_answer(self.name, hints, "no options were given")
            return boxed([rng.choice(sorted(hints.options))])
        if kind in (AnswerType.STEP_NUMBER, AnswerType.STEP_SEQUENCE):
            if not hints.step_numbers:
                return cannot_answer(self.name, hints, "no candidate step numbers were given")
            candidates = sorted(set(hints.step_numbers))
            if kind == AnswerType.STEP_NUMBER:
                return boxed([str(rng.choice(candidates))])
            size = rng.randint(1, len(candidates))
            return boxed([str(n) for n in sorted(rng.sample(candidates, size))])
        if kind == AnswerType.BLANKS:
            return blanks_answer(hints) or cannot_answer(self.name, hints, "the number of blanks is unknown")
        if kind in (AnswerType.FREE_TEXT, AnswerType.BOXES):
            if not hints.chance_answers:
                return cannot_answer(self.name, hints, "no other question of its task has a gold answer")
            return rng.choice(hints.chance_answers)
        return cannot_answer(self.name, hints, "there is nothing to choose from")

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "seed": self.seed,
            "free_text_and_boxes": "a random gold answer of another item of the same task",
        }


class LongestOptionBaseline(OfflineBaseline):
    """Picks the option with the longest text (first letter on ties): the classic answer-length bias probe."""

    def __init__(self, *, max_images: int | None = None) -> None:
        super().__init__("longest-option", max_images=max_images)

    def answer(self, hints: AnswerHints, request: GenerateRequest) -> str:
        if hints.answer_type == AnswerType.CHOICE:
            options = hints.options
            if not options:
                return cannot_answer(self.name, hints, "no options were given")
            # max() keeps the first of equal keys, and letters are sorted: ties go to the earliest letter.
            return boxed([max(sorted(options), key=lambda letter: len(options[letter]))])
        if hints.answer_type == AnswerType.BLANKS:
            return blanks_answer(hints) or cannot_answer(self.name, hints, "the number of blanks is unknown")
        return cannot_answer(self.name, hints, "there are no option texts to compare")


class FirstOptionBaseline(OfflineBaseline):
    """Always the first option / first candidate step: exposes answer-position bias in a benchmark."""

    def __init__(self, *, max_images: int | None = None) -> None:
        super().__init__("first-option", max_images=max_images)

    def answer(self, hints: AnswerHints, request: GenerateRequest) -> str:
        kind = hints.answer_type
        if kind == AnswerType.CHOICE:
            if not hints.options:
                return cannot_answer(self.name, hints, "no options were given")
            return boxed([sorted(hints.options)[0]])
        if kind in (AnswerType.STEP_NUMBER, AnswerType.STEP_SEQUENCE):
            if not hints.step_numbers:
                return cannot_answer(self.name, hints, "no candidate step numbers were given")
            return boxed([str(hints.step_numbers[0])])
        if kind == AnswerType.BLANKS:
            return blanks_answer(hints) or cannot_answer(self.name, hints, "the number of blanks is unknown")
        return cannot_answer(self.name, hints, "there is nothing to choose from")
