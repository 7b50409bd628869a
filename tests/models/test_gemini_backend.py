"""Gemini through the real `google-genai` SDK, pointed at the loopback server's generateContent route."""

from __future__ import annotations

import pytest

from expvid.fakes.models.server import Reply, script
from expvid.models import BackendError, ThinkingConfig, create_backend
from expvid.schema import ErrorKind


@pytest.fixture
def gemini(server, monkeypatch, fast):
    monkeypatch.setenv("GEMINI_API_KEY", "gk-loopback")
    server.api_key = "gk-loopback"

    def build(**options):
        return create_backend("gemini:gemini-test", base_url=server.gemini_base_url, **{**fast, **options})

    return build


def test_round_trip_with_images_system_thinking_and_usage(
    call, server, gemini, make_request, coded_frames, frame_code
):
    server.reset(Reply.ok("\\boxed{12}", reasoning="Step 12 follows.", reasoning_tokens=9))
    order = [5, 0, 3, 7]
    request = make_request(
        [coded_frames[i] for i in order], thinking=ThinkingConfig(enabled=True, budget_tokens=1024), seed=5
    )

    response = call(gemini(), request)

    assert response.text == "\\boxed{12}"
    assert response.reasoning == "Step 12 follows."
    assert response.finish_reason == "STOP"
    assert response.usage.reasoning_tokens == 9 and response.usage.prompt_tokens == 10
    (received,) = server.requests
    assert received.path.endswith("/models/gemini-test:generateContent")
    assert received.headers["x-goog-api-key"] == "gk-loopback"
    assert received.body["systemInstruction"]["parts"] == [{"text": "You are a careful lab assistant."}]
    assert [frame_code(image) for image in received.images] == order
    config = received.body["generationConfig"]
    assert config["temperature"] == 0.1 and config["maxOutputTokens"] == 8192 and config["seed"] == 5
    thinking = config["thinkingConfig"]
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 1024
    assert server.rejections == []


@pytest.mark.parametrize(
    ("thinking", "budget"),
    [(ThinkingConfig(enabled=False), 0), (ThinkingConfig(enabled=True), -1)],
    ids=["off", "dynamic"],
)
def test_thinking_budget_mapping(call, server, gemini, make_request, thinking, budget):
    call(gemini(), make_request(thinking=thinking))
    config = server.requests[0].body["generationConfig"]["thinkingConfig"]
    assert config.get("thinkingBudget", config.get("thinking_budget")) == budget


def test_429_with_retry_after_and_5xx_are_retried(call, server, gemini, make_request):
    server.reset(script(Reply.rate_limited(0.05), Reply.error(503), "\\boxed{B}"))
    backend = gemini()
    assert call(backend, make_request()).text == "\\boxed{B}"
    stats = backend.stats()
    assert stats.rate_limited == 1 and stats.server_errors == 1 and stats.limit < stats.max_limit


def test_errors_timeouts_and_empty_candidates(call, server, gemini, make_request):
    server.reset(Reply.error(400, "image too large"))
    with pytest.raises(BackendError, match="image too large") as caught:
        call(gemini(), make_request())
    assert caught.value.status == 400 and len(server.requests) == 1

    server.reset(Reply.slow("late", delay_s=5))
    with pytest.raises(BackendError) as caught:
        call(gemini(timeout_s=0.2, max_retries=0), make_request())
    assert caught.value.kind == ErrorKind.TIMEOUT

    server.reset(Reply.ok(None))  # a candidate with no parts
    with pytest.raises(BackendError, match="no text"):
        call(gemini(max_retries=1), make_request())
    assert len(server.requests) == 2
