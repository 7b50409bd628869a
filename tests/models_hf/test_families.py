"""Every supported family, loaded through `create_backend("hf:PATH")`, generates for frames end to end.

The prompt token counts prove how the frames reached the model: as images each frame costs its own
vision tokens; as a video Qwen merges pairs of frames into one temporal patch, InternVL gives every
frame one tile and a "FrameN:" line, LLaVA-OneVision pools each frame 2x2.
"""

from __future__ import annotations

import asyncio

import pytest

from expvid.models import GenerateRequest, ImagePart, Message, TextPart, create_backend
from expvid.models.hf import FRAME_TIMES_KEY

FAMILY_NAMES = {
    "qwen2_vl": "qwen2-vl",
    "qwen2_5_vl": "qwen2.5-vl",
    "internvl": "internvl",
    "llava_onevision": "llava-onevision",
}


def request(
    frames: list[bytes], question: str = "which tool is used in this step ?", **fields
) -> GenerateRequest:
    content = [*(ImagePart(data=frame) for frame in frames), TextPart(text=question)]
    fields.setdefault("temperature", 0.0)
    fields.setdefault("max_tokens", 4)
    return GenerateRequest(messages=[Message(role="user", content=content)], **fields)


def run_all(backend, requests):
    async def go():
        try:
            return await asyncio.gather(*(backend.generate(r) for r in requests), return_exceptions=True)
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("model_type", list(FAMILY_NAMES))
def test_each_family_generates_for_frames_as_images_and_as_a_video(tiny_checkpoints, frames, model_type):
    path = tiny_checkpoints[model_type]
    prompt_tokens = {}
    for mode in ("images", "video"):
        backend = create_backend(f"hf:{path}", frames_as=mode, batch_size=4)
        described = backend.describe()
        assert described["family"] == FAMILY_NAMES[model_type]
        assert described["model_type"] == model_type
        assert described["device"] == "cpu" and described["dtype"] == "float32"
        eight, four = request(frames), request(frames[:4])
        results = run_all(backend, [eight, eight, four])
        for result in results:
            assert not isinstance(result, Exception), result
            assert isinstance(result.text, str)
            assert 1 <= result.usage.completion_tokens <= 4
            assert result.finish_reason in ("stop", "length")
            assert result.latency_s > 0
        assert results[0].text == results[1].text  # same request, same greedy answer
        # 8-frame requests share a batch; the 4-frame one has another image count, so its own batch.
        assert backend.batches == 2
        assert backend.stats().successes == 3
        prompt_tokens[mode] = (results[0].usage.prompt_tokens, results[2].usage.prompt_tokens)

    images_per_frame = (prompt_tokens["images"][0] - prompt_tokens["images"][1]) / 4
    video_per_frame = (prompt_tokens["video"][0] - prompt_tokens["video"][1]) / 4
    if model_type.startswith("qwen"):
        assert images_per_frame == 6  # 56x56 -> 2x2 merged patches, plus vision start and end
        assert video_per_frame == 2  # two frames share one temporal patch
    elif model_type == "internvl":
        assert images_per_frame == 7  # 2x2 tiles + thumbnail, wrapped in <img></img>
        assert video_per_frame > 1  # one tile per frame plus its "FrameN:" line
        assert video_per_frame < images_per_frame
    else:
        assert images_per_frame == 5  # 4 patches + newline per image of a multi-image prompt
        assert video_per_frame == 1  # 2x2 patches pooled to one token per frame


def test_auto_mode_follows_the_requests_input_mode(tiny_checkpoints, frames):
    backend = create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}")  # frames_as="auto"
    times = [i * 0.5 for i in range(8)]
    as_video = request(frames, input_mode="video", metadata={FRAME_TIMES_KEY: times})
    as_images = request(frames, metadata={FRAME_TIMES_KEY: times})  # the run's input mode decides
    video_result, images_result = run_all(backend, [as_video, as_images])
    # images: 8 x (4 tokens + start + end) = 48; video: 4 temporal patches x 4 tokens + start + end = 18
    assert images_result.usage.prompt_tokens - video_result.usage.prompt_tokens == 48 - 18


def test_an_odd_number_of_frames_is_padded_not_dropped_or_resampled(tiny_checkpoints, frames):
    backend = create_backend(f"hf:{tiny_checkpoints['qwen2_5_vl']}", frames_as="video")
    five, six = run_all(backend, [request(frames[:5]), request(frames[:6])])
    # 5 frames -> 3 temporal patches (the last frame repeated), exactly like 6 frames.
    assert five.usage.prompt_tokens == six.usage.prompt_tokens


def test_a_frame_that_does_not_decode_fails_only_its_own_request(tiny_checkpoints, frames):
    from expvid.models import BackendError

    backend = create_backend(f"hf:{tiny_checkpoints['llava_onevision']}", frames_as="images")
    broken = request([frames[0], b"not a jpeg at all"], metadata={"item_id": "bad-item"})
    good = request(frames[:2])
    bad_result, good_result = run_all(backend, [broken, good])
    assert isinstance(bad_result, BackendError)
    assert "bad-item" in str(bad_result) and "does not decode" in str(bad_result)
    assert not isinstance(good_result, Exception)
    assert backend.stats().failures == 1 and backend.stats().successes == 1


def test_image_cap_is_enforced_before_anything_runs(tiny_checkpoints, frames):
    from expvid.models import BackendError

    backend = create_backend(f"hf:{tiny_checkpoints['internvl']}", max_images=4)
    (result,) = run_all(backend, [request(frames)])
    assert isinstance(result, BackendError) and "max_images=4" in str(result)
    assert backend.batches == 0


def test_system_prompt_and_text_only_requests_work(tiny_checkpoints):
    backend = create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}")
    messages = [
        Message(role="system", content=[TextPart(text="You are a careful lab assistant.")]),
        Message(role="user", content=[TextPart(text="what happens next ?")]),
    ]
    (result,) = run_all(backend, [GenerateRequest(messages=messages, temperature=0.0, max_tokens=3)])
    assert not isinstance(result, Exception), result
    assert result.usage.completion_tokens >= 1
