"""Providers' rules beyond OpenAI's reasoning models: Claude's temperature and image limit, refusals
from Claude and Gemini, and frames sent as one video to servers that take it (and refused by those
that do not), each against the loopback server speaking the provider's protocol."""

from __future__ import annotations

import httpx2
import pytest

from expvid.fakes.models.server import AnthropicRules, OpenAIChatRules, OpenAIReasoningRules, Reply
from expvid.models import BackendConfigError, ThinkingConfig, create_backend
from expvid.models.anthropic_backend import THINKING_TEMPERATURE, messages_payload


def test_claude_temperature_is_sent_where_the_sdk_takes_it_but_never_with_thinking(make_request):
    plain, sent = messages_payload(
        make_request(temperature=0.1), model="claude", extra_body=None, takes_temperature=True
    )
    assert plain["temperature"] == 0.1 and sent["temperature"] == 0.1 and sent["not_sent"] == {}
    thinking = make_request(
        temperature=0.1, thinking=ThinkingConfig(enabled=True, budget_tokens=2048), max_tokens=4096
    )
    body, sent = messages_payload(thinking, model="claude", extra_body=None, takes_temperature=True)
    assert "temperature" not in body and sent["temperature"] is None
    assert sent["not_sent"]["temperature"] == THINKING_TEMPERATURE
    old_sdk_body, sent = messages_payload(
        make_request(), model="claude", extra_body=None, sdk_version="2.13.0"
    )
    assert "temperature" not in old_sdk_body and "2.13.0" in sent["not_sent"]["temperature"]


def test_claude_loopback_rules_answer_like_the_api(server):
    server.reset("ok", rules=[AnthropicRules()])
    base = {"model": "claude", "max_tokens": 4096, "messages": [{"role": "user", "content": "hi"}]}
    with httpx2.Client(timeout=10) as http:
        thinking = http.post(
            f"{server.anthropic_base_url}/v1/messages",
            json={**base, "temperature": 0.1, "thinking": {"type": "enabled", "budget_tokens": 2048}},
        )
        accepted = http.post(f"{server.anthropic_base_url}/v1/messages", json={**base, "temperature": 0.1})
    assert thinking.status_code == 400
    error = thinking.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["message"].startswith("`temperature` may only be set to 1 when thinking is enabled.")
    assert accepted.status_code == 200


def test_claude_backend_caps_images_at_100_before_sending(
    call, server, make_request, coded_frames, monkeypatch
):
    from expvid.models import BackendError

    monkeypatch.setenv("CLAUDE_KEY_FOR_TESTS", "k")
    server.reset("ok", rules=[AnthropicRules()])
    backend = create_backend(
        "anthropic:claude-sonnet-4", base_url=server.anthropic_base_url, api_key_env="CLAUDE_KEY_FOR_TESTS"
    )
    assert backend.describe()["image_limit"]["max_images"] == 100
    with pytest.raises(BackendError, match="101 images, over max_images=100"):
        call(backend, make_request([coded_frames[0]] * 101))
    assert server.requests == [] and server.refused == []  # refused here, not by the API


def test_claude_and_gemini_refusals_are_answers(call, server, make_request, monkeypatch):
    monkeypatch.setenv("CLAUDE_KEY_FOR_TESTS", "k")
    monkeypatch.setenv("GEMINI_API_KEY", "g")
    server.reset(Reply.refused("declined"))
    claude = create_backend(
        "anthropic:claude", base_url=server.anthropic_base_url, api_key_env="CLAUDE_KEY_FOR_TESTS"
    )
    gemini = create_backend("gemini:gemini-2.5-pro", base_url=server.gemini_base_url)

    from_claude = call(claude, make_request())
    from_gemini = call(gemini, make_request())

    assert from_claude.refusal == "stop_reason: refusal" and from_claude.text == ""
    assert from_claude.finish_reason == "refusal"
    assert from_gemini.refusal == "finish reason SAFETY" and from_gemini.text == ""
    assert (
        from_gemini.sent["temperature"] == 0.1
        and from_gemini.sent["token_limit_field"] == "max_output_tokens"
    )
    assert len(server.requests) == 2  # neither was retried


def test_frames_as_one_video_reach_a_vllm_like_server_in_order(
    call, server, make_request, coded_frames, frame_code
):
    backend = create_backend(f"openai:qwen2.5-vl@{server.openai_base_url}", input_mode="video")
    order = [4, 0, 6, 2, 7]
    request = make_request(
        [coded_frames[i] for i in order],
        input_mode="video",
        metadata={"frame_times_s": [0.5, 1.5, 2.5, 3.5, 4.5]},
    )

    response = call(backend, request)

    (received,) = server.requests
    (video,) = received.videos
    assert [frame_code(frame) for frame in video] == order and received.images == []
    parts = received.body["messages"][1]["content"]
    assert [part["type"] for part in parts] == ["video_url", "text"]
    assert received.body["media_io_kwargs"] == {"video": {"num_frames": 5, "fps": 1.0}}
    assert response.sent["input_mode"] == "video" and response.sent["video"] == {"num_frames": 5, "fps": 1.0}
    images_key = backend.request_hash(request.model_copy(update={"input_mode": "images"}))
    assert backend.request_hash(request) != images_key  # another input, another cache entry


def test_backends_that_take_no_video_refuse_a_video_run_when_built(server, monkeypatch):
    monkeypatch.setenv("CLAUDE_KEY_FOR_TESTS", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # api.openai.com needs a key before anything else
    with pytest.raises(BackendConfigError, match="--input-mode images"):
        create_backend("openai:gpt-4o", base_url="https://api.openai.com/v1", input_mode="video")
    with pytest.raises(BackendConfigError, match="--input-mode images"):
        create_backend("anthropic:claude", api_key_env="CLAUDE_KEY_FOR_TESTS", input_mode="video")


def test_openai_chat_rules_refuse_a_video_part_with_openais_error(
    call, server, make_request, coded_frames, fast
):
    from expvid.models import BackendError

    server.reset("ok", rules=[OpenAIChatRules()])
    backend = create_backend(
        f"openai:gpt-4o@{server.openai_base_url}", **fast
    )  # a proxy: not known as OpenAI
    with pytest.raises(BackendError) as caught:
        call(backend, make_request(coded_frames[:2], input_mode="video"))
    assert caught.value.status == 400
    assert "Invalid value: 'video_url'" in str(caught.value)


def test_openai_reasoning_rules_answer_with_openais_exact_bodies(server):
    server.reset("ok", rules=[OpenAIReasoningRules()])
    base = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}
    with httpx2.Client(timeout=10) as http:
        url = f"{server.openai_base_url}/chat/completions"
        tokens = http.post(url, json={**base, "max_tokens": 10})
        temperature = http.post(url, json={**base, "max_completion_tokens": 10, "temperature": 0.1})
        effort = http.post(url, json={**base, "reasoning_effort": "none"})
        fine = http.post(url, json={**base, "max_completion_tokens": 10, "temperature": 1})
    assert tokens.status_code == temperature.status_code == effort.status_code == 400
    assert tokens.json() == {
        "error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error",
            "param": "max_tokens",
            "code": "unsupported_parameter",
        }
    }
    assert temperature.json()["error"] == {
        "message": "Unsupported value: 'temperature' does not support 0.1 with this model. "
        "Only the default (1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
    assert effort.json()["error"]["message"] == (
        "Unsupported value: 'reasoning_effort' does not support 'none' with this model. "
        "Supported values are: 'minimal', 'low', 'medium', and 'high'."
    )
    assert fine.status_code == 200  # the default temperature is accepted
