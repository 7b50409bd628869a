"""`socratic:CAPTIONER+ANSWERER` (ProMQA section 4.1) against real OpenAI-compatible servers on loopback."""

from __future__ import annotations

import asyncio
import io

import numpy as np
import pytest
from PIL import Image

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.media.synth import read_frame_code, scene_frame
from expvid.models import BackendConfigError, create_backend
from expvid.models.socratic import SocraticBackend, split_socratic
from expvid.models.types import BackendError, GenerateRequest, ImagePart, Message, TextPart


def frame(code: int) -> ImagePart:
    buffer = io.BytesIO()
    Image.fromarray(scene_frame(code, 160, 96)).save(buffer, format="PNG")
    return ImagePart(data=buffer.getvalue(), mime="image/png")


class Captioner:
    """Reads the frame's burned-in number, as a captioner would describe what it sees."""

    def __init__(self, fail_on: int | None = None) -> None:
        self.fail_on = fail_on

    def __call__(self, request: RecordedRequest) -> Reply | str:
        assert len(request.images) == 1 and "Describe this video frame" in request.texts[-1]
        code = read_frame_code(np.asarray(Image.open(io.BytesIO(request.images[0])).convert("RGB")))
        if code == self.fail_on:
            return Reply.error(500, "captioner down")
        return Reply.ok(f"frame number {code} shows a bench", prompt_tokens=50, completion_tokens=7)


def answerer(request: RecordedRequest) -> Reply | str:
    assert request.n_images == 0
    return Reply.ok("Stir the contents.", prompt_tokens=200, completion_tokens=4)


def test_spec_splits_at_the_second_model_even_with_urls() -> None:
    assert split_socratic("openai:llava@http://a:1/v1+openai:llama@http://b:2/v1") == (
        "openai:llava@http://a:1/v1",
        "openai:llama@http://b:2/v1",
    )
    assert split_socratic("openai:c+d+hf:/models/x") == ("openai:c+d", "hf:/models/x")
    with pytest.raises(BackendConfigError, match="CAPTIONER\\+ANSWERER"):
        create_backend("socratic:openai:only-one")


def test_frames_are_captioned_one_by_one_and_the_answerer_reads_the_captions(tmp_path) -> None:
    with LoopbackServer(Captioner()) as captions, LoopbackServer(answerer) as answers:
        backend = create_backend(
            f"socratic:openai:llava-1.5@{captions.openai_base_url}+openai:llama-3.1@{answers.openai_base_url}",
            cache_dir=tmp_path,
            max_retries=0,
        )
        assert isinstance(backend, SocraticBackend)
        request = GenerateRequest(
            messages=[
                Message(role="user", content=[TextPart(text="What next?"), frame(3), frame(7), frame(3)])
            ],
            temperature=0.0,
            max_tokens=32,
        )
        response = asyncio.run(backend.generate(request))
        again = asyncio.run(backend.generate(request))
        asyncio.run(backend.aclose())
        # Three frames, two distinct: the repeated frame is answered by the captioner's cache.
        assert len(captions.requests) == 2
        assert len(answers.requests) == 1 and again.cached
        text = "\n".join(answers.requests[0].texts)
        assert (
            text.index("What next?")
            < text.index("Frame 1: frame number 3")
            < text.index("Frame 2: frame number 7")
        )
        assert "Frame 3: frame number 3" in text
    assert response.text == "Stir the contents."
    assert response.sent["captions"] == ["frame number 3 shows a bench", "frame number 7 shows a bench",
                                         "frame number 3 shows a bench"]  # fmt: skip
    assert response.usage.prompt_tokens == 200 + 3 * 50 and response.usage.completion_tokens == 4 + 3 * 7
    described = backend.describe()
    assert described["kind"] == "socratic" and described["caption_prompt_sha256"]


def test_a_failed_caption_fails_the_request(tmp_path) -> None:
    with LoopbackServer(Captioner(fail_on=7)) as captions, LoopbackServer(answerer) as answers:
        backend = create_backend(
            f"socratic:openai:c@{captions.openai_base_url}+openai:a@{answers.openai_base_url}",
            cache_dir=tmp_path,
            max_retries=0,
        )
        request = GenerateRequest(
            messages=[Message(role="user", content=[TextPart(text="Q"), frame(3), frame(7)])]
        )
        with pytest.raises(BackendError):
            asyncio.run(backend.generate(request))
        asyncio.run(backend.aclose())
        assert answers.requests == []


def test_the_answerer_is_not_told_it_sees_images(tmp_path) -> None:
    """A suite's prompt that says "The images are the sampled frames" (ProMQA's) is reworded for the
    Socratic answerer, which gets captions: the sentences come from the suite, in the request's hints."""
    from expvid.schema import AnswerType, Item, VideoRef
    from expvid.suites.promqa.prompts import answer_template
    from expvid.suites.registry import get_suite

    suite = get_suite("promqa")
    [(sentence, replacement)] = suite.caption_rewrites().items()
    assert sentence in answer_template()  # the suite's verbatim prompt holds the sentence that is rewritten
    item = Item(
        id="q1",
        suite="promqa",
        task="next",
        question="What next?",
        media=VideoRef(path="v.mp4"),
        answer=["stir"],
        answer_type=AnswerType.FREE_TEXT,
    )
    hints = suite.hints(item)
    assert hints.caption_rewrites == {sentence: replacement}
    prompt = f"A user is cooking Pinwheels.\n{sentence}\nHere is the recipe ..."
    with LoopbackServer(Captioner()) as captions, LoopbackServer(answerer) as answers:
        backend = create_backend(
            f"socratic:openai:c@{captions.openai_base_url}+openai:a@{answers.openai_base_url}",
            cache_dir=tmp_path,
            max_retries=0,
        )
        with_frames = GenerateRequest(
            messages=[Message(role="user", content=[TextPart(text=prompt), frame(2)])], hints=hints
        )
        response = asyncio.run(backend.generate(with_frames))
        # Without frames nothing is captioned and the request reaches the answerer unchanged.
        asyncio.run(
            backend.generate(
                GenerateRequest(messages=[Message(role="user", content=[TextPart(text=prompt)])], hints=hints)
            )
        )
        # A suite without rewrites (no hints): the sentence reaches the answerer as written.
        asyncio.run(backend.generate(with_frames.model_copy(update={"hints": None})))
        asyncio.run(backend.aclose())
    captioned, plain, unrewritten = ("\n".join(r.texts) for r in answers.requests)
    assert sentence not in captioned and replacement in captioned and "Frame 1: frame number 2" in captioned
    assert captioned.index(replacement) < captioned.index("Frame 1:")
    assert plain == prompt
    assert sentence in unrewritten and replacement not in unrewritten
    assert response.sent["prompt_rewrites"] == [sentence]
