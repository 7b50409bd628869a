"""Micro-batching: concurrent requests share forward passes without changing anyone's answer."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from expvid.models import GenerateRequest, ImagePart, Message, TextPart, create_backend
from expvid.models.hf.batcher import MicroBatcher


def request(frames: list[bytes], **fields) -> GenerateRequest:
    content = [*(ImagePart(data=frame) for frame in frames), TextPart(text="which tool is used ?")]
    fields.setdefault("temperature", 0.0)
    fields.setdefault("max_tokens", 5)
    return GenerateRequest(messages=[Message(role="user", content=content)], **fields)


def gather(backend, requests):
    async def go():
        try:
            return await asyncio.gather(*(backend.generate(r) for r in requests))
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_a_batch_gives_each_request_the_answer_it_gets_alone(tiny_checkpoints, frames):
    backend = create_backend(f"hf:{tiny_checkpoints['qwen2_5_vl']}", frames_as="video", batch_size=4)
    first, second = request(frames[:4]), request(frames[4:])
    alone = [gather(backend, [first])[0].text, gather(backend, [second])[0].text]
    batches_before = backend.batches
    together = [r.text for r in gather(backend, [first, second])]
    assert backend.batches == batches_before + 1  # both in one forward pass
    assert together == alone


def test_batches_are_cut_by_image_budget_and_split_by_sampling_settings(tiny_checkpoints, frames):
    backend = create_backend(f"hf:{tiny_checkpoints['internvl']}", batch_size=8, max_batch_images=16)
    gather(backend, [request(frames)] * 3)  # 8 images each: 2 fit under 16, the third waits
    assert backend.batches == 2
    assert backend.stats().peak_in_flight == 2
    gather(backend, [request(frames[:2], temperature=0.0), request(frames[:2], temperature=0.5, seed=3)])
    assert backend.batches == 4  # different sampling settings never share a batch


def test_a_seeded_sampled_answer_is_reproducible(tiny_checkpoints, frames):
    backend = create_backend(f"hf:{tiny_checkpoints['llava_onevision']}")
    sampled = request(frames[:2], temperature=1.0, seed=7, max_tokens=6)
    assert gather(backend, [sampled])[0].text == gather(backend, [sampled])[0].text


# -- the batcher itself, with a plain function standing in for the model ----------------------------


def _batcher(record: list[list[int]], **options) -> MicroBatcher[int, int]:
    def run(batch):
        record.append(list(batch))
        time.sleep(0.02)
        return [ValueError(f"odd {n}") if n % 2 else n * 10 for n in batch]

    defaults = {
        "key": lambda n: n % 3 == 0,
        "cost": lambda n: 1,
        "max_size": 3,
        "max_cost": None,
        "wait_s": 0.05,
    }
    return MicroBatcher(run, **{**defaults, **options})


def test_requests_wait_for_company_and_fail_alone():
    record: list[list[int]] = []
    batcher = _batcher(record)

    async def go():
        results = await asyncio.gather(*(batcher.submit(n) for n in (1, 2, 4, 3, 6)), return_exceptions=True)
        batcher.close()
        return results

    results = asyncio.run(go())
    assert [str(r) if isinstance(r, Exception) else r for r in results] == ["odd 1", 20, 40, "odd 3", 60]
    assert sorted(map(sorted, record)) == [[1, 2, 4], [3, 6]]  # grouped by key, in one pass each


def test_max_size_and_max_cost_cut_batches():
    record: list[list[int]] = []
    batcher = _batcher(record, key=lambda n: 0, cost=lambda n: n, max_size=3, max_cost=10)

    async def go():
        await asyncio.gather(*(batcher.submit(n) for n in (2, 4, 6, 8, 2, 2, 2, 2)), return_exceptions=True)
        batcher.close()

    asyncio.run(go())
    assert record == [[2, 4], [6], [8, 2], [2, 2, 2]]


def test_a_cancelled_request_never_reaches_the_model():
    record: list[list[int]] = []
    batcher = _batcher(record, key=lambda n: 0, wait_s=0.2)

    async def go():
        doomed = asyncio.create_task(batcher.submit(4))
        kept = asyncio.create_task(batcher.submit(8))
        await asyncio.sleep(0.05)
        doomed.cancel()
        result = await kept
        batcher.close()
        return result

    assert asyncio.run(go()) == 80
    assert record == [[8]]


def test_batches_run_one_at_a_time_on_one_thread():
    threads: set[str] = set()
    running = {"now": 0, "most": 0}
    lock = threading.Lock()

    def run(batch):
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
            threads.add(threading.current_thread().name)
        time.sleep(0.01)
        with lock:
            running["now"] -= 1
        return list(batch)

    batcher = MicroBatcher(run, key=lambda n: n, cost=lambda n: 1, max_size=2, max_cost=None, wait_s=0)

    async def go():
        return await asyncio.gather(*(batcher.submit(n) for n in range(12)))

    assert asyncio.run(go()) == list(range(12))
    batcher.close()
    assert running["most"] == 1 and len(threads) == 1


def test_a_batcher_survives_a_second_event_loop():
    record: list[list[int]] = []
    batcher = _batcher(record, key=lambda n: 0)
    assert asyncio.run(batcher.submit(2)) == 20
    batcher.close()
    assert asyncio.run(batcher.submit(4)) == 40  # a later asyncio.run() gets a fresh worker
    batcher.close()


@pytest.mark.parametrize("bad", [0, -1])
def test_max_size_must_be_positive(bad):
    with pytest.raises(ValueError, match="max_size"):
        MicroBatcher(
            lambda b: list(b), key=lambda n: 0, cost=lambda n: 1, max_size=bad, max_cost=None, wait_s=0
        )


def test_closing_the_backend_stops_a_long_generation_at_once(tiny_checkpoints, frames, tmp_path):
    import json
    import shutil

    from expvid.models import BackendError

    # A copy without an end-of-sequence token: it would generate until max_tokens (100000).
    folder = tmp_path / "endless"
    shutil.copytree(tiny_checkpoints["qwen2_vl"], folder)
    generation_config = json.loads((folder / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(json.dumps({**generation_config, "eos_token_id": None}))
    backend = create_backend(f"hf:{folder}")
    long = request(frames[:2], max_tokens=100_000)

    async def go():
        task = asyncio.create_task(backend.generate(long))
        await asyncio.sleep(1.0)
        assert not task.done()
        started = time.monotonic()
        await backend.aclose()  # what the runner does on Ctrl-C, in its finally block
        closed_in = time.monotonic() - started
        with pytest.raises(BackendError, match="interrupted"):
            await task
        return closed_in

    assert asyncio.run(go()) < 5
    (after,) = gather(backend, [request(frames[:2])])  # and the backend still works afterwards
    assert after.usage.completion_tokens == 5


def test_answers_are_cached_by_request_checkpoint_and_frame_form(tiny_checkpoints, frames, tmp_path):
    from expvid.models.hf import FRAME_TIMES_KEY

    options = {"cache_dir": tmp_path / "cache"}
    backend = create_backend(f"hf:{tiny_checkpoints['llava_onevision']}", **options)
    as_images = request(frames[:4])
    as_video = request(frames[:4], input_mode="video", metadata={FRAME_TIMES_KEY: [0.0, 1.0, 2.0, 3.0]})
    first = gather(backend, [as_images])[0]
    again = gather(create_backend(f"hf:{tiny_checkpoints['llava_onevision']}", **options), [as_images])[0]
    assert first.cached is False and again.cached is True and again.text == first.text
    assert again.request_hash == first.request_hash
    assert backend.request_hash(as_video) != backend.request_hash(as_images)  # a video is another input
    other_model = create_backend(f"hf:{tiny_checkpoints['internvl']}", **options)
    assert other_model.request_hash(as_images) != backend.request_hash(as_images)
