"""Claude through the real `anthropic` SDK, pointed at the loopback server's Messages API route."""

from __future__ import annotations

import pytest

from expvid.fakes.models.server import Reply, script
from expvid.models import BackendError, ThinkingConfig, create_backend
from expvid.schema import ErrorKind


@pytest.fixture
def claude(server, monkeypatch, fast):
    monkeypatch.setenv("CLAUDE_KEY_FOR_TESTS", "sk-ant-loopback")
    server.api_key = "sk-ant-loopback"

    def build(**options):
        merged = {**fast, **options}
        return create_backend(
            "anthropic:claude-test",
            base_url=server.anthropic_base_url,
            api_key_env="CLAUDE_KEY_FOR_TESTS",
            **merged,
        )

    return build


def test_round_trip_with_images_system_thinking_and_usage(
    call, server, claude, make_request, coded_frames, frame_code
):
    server.reset(Reply.ok("\\boxed{C}", reasoning="The vortex mixer spins.", reasoning_tokens=12))
    order = [2, 6, 1]
    request = make_request(
        [coded_frames[i] for i in order],
        thinking=ThinkingConfig(enabled=True, budget_tokens=2048),
        max_tokens=4096,
    )

    response = call(claude(), request)

    assert response.text == "\\boxed{C}"
    assert response.reasoning == "The vortex mixer spins."
    assert response.finish_reason == "end_turn"
    assert response.usage.reasoning_tokens == 12 and response.usage.prompt_tokens == 10
    (received,) = server.requests
    assert received.path == "/v1/messages"
    assert received.api_key == "sk-ant-loopback"  # x-api-key or (SDK 2.x) a Bearer token
    assert "anthropic-version" in received.headers
    assert received.body["system"] == "You are a careful lab assistant."
    assert [m["role"] for m in received.body["messages"]] == ["user"]
    assert [frame_code(image) for image in received.images] == order
    assert received.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in received.body  # the Messages API has no temperature: not sent...
    assert claude().describe()["temperature_sent"] is False  # ...and the manifest says so
    assert received.body["max_tokens"] == 4096
    assert server.rejections == []


def test_thinking_budget_zero_turns_thinking_off(call, server, claude, make_request):
    call(claude(), make_request(thinking=ThinkingConfig(enabled=True, budget_tokens=0)))
    assert server.requests[0].body["thinking"] == {"type": "disabled"}


def test_extra_body_reaches_the_api(call, server, claude, make_request):
    call(claude(extra_body={"temperature": 0.0}), make_request())
    assert server.requests[0].body["temperature"] == 0.0


def test_no_thinking_field_when_not_asked(call, server, claude, make_request):
    call(claude(), make_request())
    assert "thinking" not in server.requests[0].body


def test_429_and_529_are_retried_through_the_sdk(call, server, claude, make_request):
    server.reset(script(Reply.rate_limited(0.05), Reply.error(529, "overloaded"), "\\boxed{A}"))
    backend = claude()
    assert call(backend, make_request()).text == "\\boxed{A}"
    stats = backend.stats()
    assert stats.rate_limited == 1 and stats.server_errors == 1 and stats.requests == 3


def test_exhausted_retries_keep_the_status(call, server, claude, make_request):
    server.reset(Reply.error(500))
    backend = claude(max_retries=1)
    with pytest.raises(BackendError) as caught:
        call(backend, make_request())
    assert caught.value.status == 500 and len(server.requests) == 2


def test_bad_request_is_final(call, server, claude, make_request):
    server.reset(Reply.error(400, "prompt is too long"))
    with pytest.raises(BackendError, match="prompt is too long") as caught:
        call(claude(), make_request())
    assert caught.value.status == 400 and len(server.requests) == 1


def test_timeout_and_malformed(call, server, claude, make_request):
    server.reset(Reply.slow("late", delay_s=5))
    with pytest.raises(BackendError) as caught:
        call(claude(timeout_s=0.2, max_retries=0), make_request())
    assert caught.value.kind == ErrorKind.TIMEOUT

    server.reset(Reply.malformed(b"not json at all"))
    with pytest.raises(BackendError, match="malformed") as caught:
        call(claude(max_retries=1), make_request())
    assert len(server.requests) == 2

    server.reset(Reply.ok(None))  # a message with no content blocks
    with pytest.raises(BackendError, match="no text"):
        call(claude(max_retries=0), make_request())
