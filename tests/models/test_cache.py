"""Response cache: hits on the identical request only, misses when anything sent changes, safe in parallel."""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from expvid.fakes.models.server import Reply
from expvid.models import AnswerHints, BackendError, GenerateResponse, ThinkingConfig, create_backend
from expvid.models.cache import ResponseCache, cache_key
from expvid.schema import AnswerType, Usage


def test_identical_request_is_a_hit_even_for_a_new_backend(
    call, server, make_request, coded_frames, tmp_path
):
    server.reset(Reply.ok("\\boxed{B}", reasoning="because", reasoning_tokens=3))
    spec = f"openai:m@{server.openai_base_url}"
    request = make_request(coded_frames[:3])

    backend = create_backend(spec, cache_dir=tmp_path)
    first = call(backend, request)
    second = call(backend, request)
    rerun = create_backend(spec, cache_dir=tmp_path)  # a resumed run in a new process reads the same file
    third = call(rerun, request)

    assert len(server.requests) == 1
    assert (first.cached, second.cached, third.cached) == (False, True, True)
    for hit in (second, third):
        assert hit.text == first.text and hit.reasoning == first.reasoning and hit.usage == first.usage
        assert hit.request_hash == first.request_hash
    assert backend.stats().cache_hits == 1 and backend.stats().requests == 1
    assert (tmp_path / "responses.sqlite3").exists()


def _flip_one_byte(data: bytes) -> bytes:
    index = len(data) // 2
    while data[index] == 0xFF or data[index] ^ 0x01 == 0xFF:
        index += 1
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


CHANGES = {
    "question": lambda mk, frames: mk(frames, question="Which material is used?"),
    "temperature": lambda mk, frames: mk(frames, temperature=0.7),
    "max_tokens": lambda mk, frames: mk(frames, max_tokens=1024),
    "seed": lambda mk, frames: mk(frames, seed=1),
    "thinking": lambda mk, frames: mk(frames, thinking=ThinkingConfig(enabled=True, budget_tokens=1024)),
    "one image byte": lambda mk, frames: mk([frames[0], _flip_one_byte(frames[1])]),
    "image order": lambda mk, frames: mk([frames[1], frames[0]]),
    "one image fewer": lambda mk, frames: mk(frames[:1]),
}


@pytest.mark.parametrize("change", CHANGES.values(), ids=CHANGES.keys())
def test_any_change_to_what_is_sent_is_a_miss(call, server, make_request, coded_frames, tmp_path, change):
    backend = create_backend(f"openai:m@{server.openai_base_url}", cache_dir=tmp_path)
    frames = coded_frames[:2]
    base = make_request(frames)
    changed = change(make_request, frames)

    call(backend, base)
    response = call(backend, changed)

    assert response.cached is False
    assert len(server.requests) == 2
    assert server.rejections == []  # the altered image still decoded: the miss is the cache's doing


def test_model_and_extra_body_are_part_of_the_key_but_the_server_url_is_not(
    call, server, make_request, tmp_path
):
    port_url = server.openai_base_url
    alias_url = port_url.replace("127.0.0.1", "localhost")
    request = make_request()
    for spec, options in [
        (f"openai:m@{port_url}", {}),
        (f"openai:other-model@{port_url}", {}),
        (f"openai:m@{port_url}", {"extra_body": {"top_k": 5}}),
        (f"openai:m@{port_url}", {"thinking_style": "none"}),
    ]:
        response = call(create_backend(spec, cache_dir=tmp_path, **options), request)
        assert response.cached is False, (spec, options)
    assert len(server.requests) == 4
    # The same model reached under another host name, or through several endpoints, answers the
    # same request the same way: a resumed campaign against a moved server pays nothing again.
    for spec in (f"openai:m@{alias_url}", f"openai:m@{alias_url},{port_url}"):
        assert call(create_backend(spec, cache_dir=tmp_path), request).cached is True, spec
    assert len(server.requests) == 4


def test_a_cache_round_asks_again_and_keeps_both_answers(call, server, make_request, tmp_path):
    backend = create_backend(f"openai:m@{server.openai_base_url}", cache_dir=tmp_path)
    assert call(backend, make_request()).cached is False
    assert call(backend, make_request(metadata={"cache_round": 1})).cached is False
    assert call(backend, make_request(metadata={"cache_round": 1})).cached is True
    assert call(backend, make_request()).cached is True
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body  # the round is never sent
    with pytest.raises(ValueError, match="cache_round"):
        cache_key(make_request(metadata={"cache_round": "x"}), backend="openai", model="m")


def test_hints_and_metadata_do_not_change_the_key(call, server, make_request, tmp_path):
    backend = create_backend(f"openai:m@{server.openai_base_url}", cache_dir=tmp_path)
    call(backend, make_request(metadata={"item_id": "a"}))
    hinted = make_request(metadata={"item_id": "b"}, hints=AnswerHints(answer_type=AnswerType.CHOICE))
    assert call(backend, hinted).cached is True


def test_backend_kind_is_part_of_the_key(make_request):
    request = make_request()
    keys = {
        cache_key(request, backend=kind, model="m", base_url="http://x/v1")
        for kind in ("openai", "anthropic", "gemini")
    }
    assert len(keys) == 3


def test_failures_are_not_cached(call, server, make_request, tmp_path, fast):
    server.reset(Reply.error(503))
    backend = create_backend(f"openai:m@{server.openai_base_url}", cache_dir=tmp_path, max_retries=0, **fast)
    with pytest.raises(BackendError):
        call(backend, make_request())
    assert len(ResponseCache(tmp_path)) == 0

    server.reset("recovered")
    response = call(backend, make_request())
    assert response.text == "recovered" and response.cached is False
    assert len(server.requests) == 1
    assert call(backend, make_request()).cached is True


def test_concurrent_tasks_share_one_cache(server, make_request, tmp_path):
    backend = create_backend(f"openai:m@{server.openai_base_url}", cache_dir=tmp_path, concurrency=8)

    async def many() -> list[GenerateResponse]:
        requests = [make_request(question=f"q{i % 10}") for i in range(10)]
        await asyncio.gather(*(backend.generate(r) for r in requests))
        responses = await asyncio.gather(*(backend.generate(r) for r in requests * 3))
        await backend.aclose()
        return responses

    responses = asyncio.run(many())
    assert all(r.cached for r in responses)
    assert len(server.requests) == 10


def _write_and_read(directory: str, worker: int, n: int) -> int:
    """Runs in another process: write n entries, read back every entry seen so far."""
    cache = ResponseCache(Path(directory))
    for i in range(n):
        cache.put(f"w{worker}-{i}", GenerateResponse(text=f"{worker}:{i}", usage=Usage(prompt_tokens=i)))
    readable = sum(cache.get(f"w{worker}-{i}") is not None for i in range(n))
    cache.close()
    return readable


def test_concurrent_processes_write_one_cache_safely(tmp_path):
    ResponseCache(tmp_path).close()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        results = list(pool.map(_write_and_read, [str(tmp_path)] * 4, range(4), [150] * 4))
    assert results == [150] * 4
    cache = ResponseCache(tmp_path)
    assert len(cache) == 600
    hit = cache.get("w3-149")
    assert hit is not None and hit.text == "3:149" and hit.cached is True
    assert cache.path.with_name("responses.sqlite3-wal").exists() or cache.path.exists()
