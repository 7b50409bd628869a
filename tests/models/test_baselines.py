"""Offline baselines (deterministic, model-shaped answers, honest refusals) and the blind wrapper."""

from __future__ import annotations

import asyncio
import re
from collections import Counter

import pytest

from expvid.models import AnswerHints, BackendError, create_backend
from expvid.schema import AnswerType, ErrorKind

OPTIONS = {"A": "pipette", "B": "a 50 mL conical centrifuge tube", "C": "vortex mixer", "D": "tweezers"}
BOXED = re.compile(r"^\\boxed\{(.*)\}$")


def answer(backend, make_request, hints: AnswerHints, item_id: str = "item-1") -> str:
    response = asyncio.run(backend.generate(make_request(hints=hints, metadata={"item_id": item_id})))
    assert response.model == backend.name
    assert response.text is not None
    return response.text


def boxed_values(text: str) -> list[str]:
    match = BOXED.match(text)
    assert match, f"not a boxed answer: {text!r}"
    return [value.strip() for value in match.group(1).split(",")]


def test_random_is_deterministic_per_seed_and_item(make_request):
    hints = AnswerHints(answer_type=AnswerType.CHOICE, options=OPTIONS)
    items = [f"item-{i}" for i in range(60)]

    first = [answer(create_backend("random:7"), make_request, hints, item) for item in items]
    again = [answer(create_backend("random:7"), make_request, hints, item) for item in reversed(items)][::-1]
    other_seed = [answer(create_backend("random:8"), make_request, hints, item) for item in items]

    assert first == again  # order of calls and backend instance do not matter
    assert first != other_seed
    letters = Counter(boxed_values(text)[0] for text in first)
    assert set(letters) == set(OPTIONS)  # all four letters occur over 60 items
    assert max(letters.values()) < 30  # and none dominates: roughly uniform


def test_random_answers_have_the_shape_a_model_would_give(make_request):
    backend = create_backend("random:1")
    steps = [12, 13, 14, 15, 16]
    for i in range(20):
        item = f"item-{i}"
        (number,) = boxed_values(
            answer(
                backend,
                make_request,
                AnswerHints(answer_type=AnswerType.STEP_NUMBER, step_numbers=steps),
                item,
            )
        )
        assert int(number) in steps
        sequence = [
            int(v)
            for v in boxed_values(
                answer(
                    backend,
                    make_request,
                    AnswerHints(answer_type=AnswerType.STEP_SEQUENCE, step_numbers=steps),
                    item,
                )
            )
        ]
        assert sequence == sorted(set(sequence)) and set(sequence) <= set(steps) and sequence
    blanks = answer(backend, make_request, AnswerHints(answer_type=AnswerType.BLANKS, n_blanks=3))
    assert blanks == "\\boxed{unknown, unknown, unknown}"


def test_random_seed_defaults_to_zero_and_names_follow_the_spec(make_request):
    hints = AnswerHints(answer_type=AnswerType.CHOICE, options=OPTIONS)
    assert create_backend("random").name == "random"
    assert create_backend("random:0").name == "random:0"
    assert answer(create_backend("random"), make_request, hints) == answer(
        create_backend("random:0"), make_request, hints
    )


def test_random_without_item_id_is_still_deterministic(make_request):
    hints = AnswerHints(answer_type=AnswerType.CHOICE, options=OPTIONS)
    backend = create_backend("random:3")
    replies = {
        asyncio.run(backend.generate(make_request(question="Which tool?", hints=hints))).text
        for _ in range(5)
    }
    assert len(replies) == 1


def test_longest_option_and_first_option(make_request):
    hints = AnswerHints(answer_type=AnswerType.CHOICE, options=OPTIONS)
    assert answer(create_backend("longest-option"), make_request, hints) == "\\boxed{B}"
    assert answer(create_backend("first-option"), make_request, hints) == "\\boxed{A}"

    tie = AnswerHints(answer_type=AnswerType.CHOICE, options={"C": "same", "A": "same", "B": "x"})
    assert answer(create_backend("longest-option"), make_request, tie) == "\\boxed{A}"  # first letter on ties
    assert (
        answer(create_backend("first-option"), make_request, tie) == "\\boxed{A}"
    )  # letters, not dict order

    steps = AnswerHints(answer_type=AnswerType.STEP_NUMBER, step_numbers=[9, 10, 11])
    assert answer(create_backend("first-option"), make_request, steps) == "\\boxed{9}"
    blanks = AnswerHints(answer_type=AnswerType.BLANKS, n_blanks=2)
    assert answer(create_backend("longest-option"), make_request, blanks) == "\\boxed{unknown, unknown}"


@pytest.mark.parametrize("spec", ["random", "longest-option", "first-option"])
@pytest.mark.parametrize(
    "hints",
    [
        AnswerHints(answer_type=AnswerType.FREE_TEXT),
        AnswerHints(answer_type=AnswerType.BOXES),
        AnswerHints(answer_type=AnswerType.CHOICE, options={}),
        AnswerHints(answer_type=AnswerType.BLANKS, n_blanks=0),
    ],
    ids=["free_text", "boxes", "choice without options", "blanks without count"],
)
def test_baselines_say_honestly_when_they_cannot_answer(make_request, spec, hints):
    text = answer(create_backend(spec), make_request, hints)
    assert "cannot answer" in text
    assert "\\boxed" not in text  # nothing an extractor could mistake for an answer


def test_longest_option_cannot_rank_step_numbers(make_request):
    hints = AnswerHints(answer_type=AnswerType.STEP_NUMBER, step_numbers=[1, 2])
    assert "cannot answer" in answer(create_backend("longest-option"), make_request, hints)


def test_missing_hints_is_an_error_naming_the_item(make_request):
    with pytest.raises(BackendError, match="item-42") as caught:
        asyncio.run(create_backend("random").generate(make_request(metadata={"item_id": "item-42"})))
    assert caught.value.kind == ErrorKind.OTHER


def test_baselines_apply_max_images_like_any_backend(make_request, coded_frames):
    hints = AnswerHints(answer_type=AnswerType.CHOICE, options=OPTIONS)
    backend = create_backend("first-option", max_images=2, concurrency=4, cache_dir=None)
    with pytest.raises(BackendError, match="max_images=2"):
        asyncio.run(backend.generate(make_request(coded_frames[:3], hints=hints)))


def test_blind_strips_images_before_the_request_leaves(call, server, make_request, coded_frames):
    backend = create_backend(f"blind:openai:m@{server.openai_base_url}")
    assert backend.name == "blind:openai:m"
    request = make_request(coded_frames[:4], question="What happens next?")

    call(backend, request)

    (received,) = server.requests
    assert received.n_images == 0
    assert received.texts == ["You are a careful lab assistant.", "What happens next?"]
    assert request.n_images == 4  # the caller's request is untouched
    assert backend.describe()["inner"]["model"] == "m"
    assert backend.stats().requests == 1


def test_blind_drops_messages_that_held_only_images(call, server, make_request, coded_frames):
    from expvid.models import GenerateRequest, ImagePart, Message, TextPart

    request = GenerateRequest(
        messages=[
            Message(role="user", content=[ImagePart(data=frame) for frame in coded_frames[:2]]),
            Message(role="user", content=[TextPart(text="Describe the frames.")]),
        ]
    )
    call(create_backend(f"blind:openai:m@{server.openai_base_url}"), request)
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "Describe the frames."}]


def test_blind_wraps_baselines_too(make_request, coded_frames):
    backend = create_backend("blind:random:5", max_images=2)
    hints = AnswerHints(answer_type=AnswerType.CHOICE, options=OPTIONS)
    # Images are stripped before the inner cap is checked: blind runs never trip max_images.
    response = asyncio.run(backend.generate(make_request(coded_frames[:6], hints=hints)))
    assert backend.name == "blind:random:5"
    assert BOXED.match(response.text or "")
