"""Seeded sampling per request, the checkpoint's generation_config, and the run's input mode on hf:.

A sampled answer must not depend on which other requests shared its batch (each row draws with its
own generator, seeded per item); the sampling settings the checkpoint states are applied and
recorded; and the run's `input_mode` decides images or video for every family.
"""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from expvid.models import BackendConfigError, GenerateRequest, ImagePart, Message, TextPart, create_backend
from expvid.run.generate import item_seed


def request(frames: list[bytes], question: str, **fields) -> GenerateRequest:
    content = [*(ImagePart(data=frame) for frame in frames), TextPart(text=question)]
    fields.setdefault("temperature", 1.0)
    fields.setdefault("max_tokens", 12)
    return GenerateRequest(messages=[Message(role="user", content=content)], **fields)


def run_all(backend, requests):
    async def go():
        try:
            return await asyncio.gather(*(backend.generate(r) for r in requests))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_sampled_answers_do_not_depend_on_batch_company_or_order(tiny_checkpoints, frames):
    backend = create_backend(f"hf:{tiny_checkpoints['qwen2_5_vl']}", batch_size=4, batch_wait_s=0.2)
    # Same prompt length for every request (no padding differences); different items, different seeds.
    requests = [
        request(frames[:2], "which tool is used ?", seed=item_seed(0, f"tools/{i}", 0)) for i in range(3)
    ]

    alone = [run_all(backend, [r])[0].text for r in requests]
    batches_before = backend.batches
    together = [r.text for r in run_all(backend, requests)]
    reversed_order = [r.text for r in run_all(backend, list(reversed(requests)))][::-1]

    assert backend.batches == batches_before + 2  # each group of three in one forward pass
    assert together == alone
    assert reversed_order == alone
    assert len(set(alone)) > 1  # the seeds really differ: the random model says different things


def test_checkpoint_generation_config_is_applied_and_recorded(tiny_checkpoints, frames, tmp_path):
    folder = tmp_path / "qwen-with-generation-config"
    shutil.copytree(tiny_checkpoints["qwen2_5_vl"], folder)
    config_path = folder / "generation_config.json"
    config = json.loads(config_path.read_text())
    # What Qwen2.5-VL-7B-Instruct's generation_config.json states.
    config.update(
        {"do_sample": True, "temperature": 0.1, "top_k": 1, "top_p": 0.001, "repetition_penalty": 1.05}
    )
    config_path.write_text(json.dumps(config))
    backend = create_backend(f"hf:{folder}")

    sampled, greedy = run_all(
        backend,
        [
            request(frames[:2], "which tool ?", temperature=0.1, seed=5),
            request(frames[:2], "which tool ?", temperature=0.0),
        ],
    )

    recorded = backend.describe()["generation_config"]
    assert {k: recorded[k] for k in ("top_k", "top_p", "repetition_penalty")} == {
        "top_k": 1,
        "top_p": 0.001,
        "repetition_penalty": 1.05,
    }
    assert sampled.sent["top_k"] == 1 and sampled.sent["repetition_penalty"] == 1.05
    assert sampled.sent["temperature"] == 0.1 and sampled.sent["seed"] == 5
    assert greedy.sent["do_sample"] is False and "top_k" not in greedy.sent
    assert greedy.sent["repetition_penalty"] == 1.05  # applies to greedy decoding as well
    assert sampled.text == greedy.text  # top_k 1: the checkpoint's settings make sampling greedy


def test_the_runs_input_mode_decides_images_or_video(tiny_checkpoints, frames):
    path = tiny_checkpoints["qwen2_5_vl"]
    times = {"frame_times_s": [i * 0.5 for i in range(8)]}
    as_images = run_all(
        create_backend(f"hf:{path}", input_mode="images"), [request(frames, "q", metadata=times)]
    )[0]
    as_video = run_all(
        create_backend(f"hf:{path}", input_mode="video"),
        [request(frames, "q", metadata=times, input_mode="video")],
    )[0]
    assert as_images.sent["input_mode"] == "images" and as_video.sent["input_mode"] == "video"
    assert as_video.sent["video_fps"] == 2.0  # from the frames' own times
    # 8 images x (4 tokens + start + end) = 48; one video: 4 temporal patches x 4 tokens + start + end = 18
    assert as_images.usage.prompt_tokens - as_video.usage.prompt_tokens == 48 - 18


def test_frames_as_must_agree_with_the_run(tiny_checkpoints):
    with pytest.raises(BackendConfigError, match="--input-mode"):
        create_backend(f"hf:{tiny_checkpoints['qwen2_vl']}", frames_as="video", input_mode="images")
