"""`random` on free-text and box questions: the gold answer of another question of the same task.

A chance baseline that only refuses would put every open suite's chance level at 0 by
construction; this one answers, is judged like any reply, and draws afresh for each sample.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from expvid.models import AnswerHints, create_backend
from expvid.schema import AnswerType

POOL = ["Stir for two minutes.", "Add the egg.", "Preheat the oven.", "Whisk the batter."]


def reply(backend, make_request, hints: AnswerHints, item_id: str, sample: int = 0) -> str:
    request = make_request(hints=hints, metadata={"item_id": item_id, "sample": sample})
    text = asyncio.run(backend.generate(request)).text
    assert text is not None
    return text


def test_free_text_and_boxes_answer_from_the_pool(make_request) -> None:
    backend = create_backend("random:3")
    free = AnswerHints(answer_type=AnswerType.FREE_TEXT, chance_answers=POOL)
    answers = [reply(backend, make_request, free, f"q{i}") for i in range(40)]
    assert set(answers) == set(POOL)  # every pool answer is drawn, nothing else
    assert max(Counter(answers).values()) < 25
    boxes = AnswerHints(answer_type=AnswerType.BOXES, chance_answers=["[0.1,0.2,0.3,0.4]"])
    assert reply(backend, make_request, boxes, "e011") == "[0.1,0.2,0.3,0.4]"
    empty = AnswerHints(answer_type=AnswerType.FREE_TEXT)
    assert "cannot answer" in reply(backend, make_request, empty, "q0")


def test_each_sample_draws_again_and_sample_zero_is_unchanged(make_request) -> None:
    hints = AnswerHints(answer_type=AnswerType.FREE_TEXT, chance_answers=POOL)
    choice = AnswerHints(answer_type=AnswerType.CHOICE, options={c: c for c in "ABCDEFGHIJ"})
    backend = create_backend("random")
    for item_hints in (hints, choice):
        samples = [reply(backend, make_request, item_hints, "item-7", sample) for sample in range(12)]
        assert len(set(samples)) > 1  # pass@k over samples means something
        again = [reply(create_backend("random"), make_request, item_hints, "item-7", s) for s in range(12)]
        assert again == samples  # deterministic per (seed, item, sample)
    # sample 0 is seeded by the item alone: a request without a sample number gets the same answer
    no_sample = asyncio.run(backend.generate(make_request(hints=hints, metadata={"item_id": "item-7"}))).text
    assert no_sample == reply(backend, make_request, hints, "item-7", 0)
