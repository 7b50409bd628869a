"""The OpenAI-compatible backend against a real loopback server: wire shape, parsing, keys, image cap."""

from __future__ import annotations

import json

import pytest

from expvid.fakes.models.server import Reply, script
from expvid.models import BackendConfigError, BackendError, ThinkingConfig, create_backend
from expvid.schema import ErrorKind


def test_round_trip_parses_text_reasoning_usage_and_finish(call, server, make_request):
    server.reset(
        Reply.ok("\\boxed{B}", reasoning="The pipette is visible.", reasoning_tokens=7, completion_tokens=30)
    )
    backend = create_backend(f"openai:qwen-vl@{server.openai_base_url}")
    request = make_request(seed=11, temperature=0.0, max_tokens=256)

    response = call(backend, request)

    assert response.text == "\\boxed{B}"
    assert response.reasoning == "The pipette is visible."
    assert response.finish_reason == "stop"
    assert response.usage.prompt_tokens == 10
    assert response.usage.completion_tokens == 30
    assert response.usage.reasoning_tokens == 7
    assert response.cached is False
    assert response.request_hash is not None and len(response.request_hash) == 64
    assert response.latency_s > 0
    (received,) = server.requests
    assert received.model == "qwen-vl"
    assert received.body["temperature"] == 0.0
    assert received.body["max_tokens"] == 256
    assert received.body["seed"] == 11
    # A text-only system message goes as a plain string (some chat templates reject part lists).
    assert received.body["messages"][0] == {"role": "system", "content": "You are a careful lab assistant."}
    assert received.roles == ["system", "user"]
    assert "chat_template_kwargs" not in received.body  # no thinking requested, nothing sent
    assert server.rejections == []


def test_images_arrive_in_message_order_and_count_matches(
    call, server, make_request, coded_frames, frame_code
):
    order = [3, 1, 4, 0, 7, 5]
    backend = create_backend(f"openai:m@{server.openai_base_url}")
    call(backend, make_request([coded_frames[i] for i in order]))

    (received,) = server.requests
    assert received.n_images == len(order)
    assert [frame_code(image) for image in received.images] == order
    assert received.image_mimes == ["image/jpeg"] * len(order)
    parts = received.body["messages"][1]["content"]
    assert [part["type"] for part in parts] == ["image_url"] * len(order) + ["text"]
    assert parts[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert server.rejections == []


def test_api_key_comes_from_the_named_env_var_and_is_sent_as_bearer(call, server, make_request, monkeypatch):
    monkeypatch.setenv("MY_VLLM_KEY", "sk-loopback-123")
    server.api_key = "sk-loopback-123"
    backend = create_backend(f"openai:m@{server.openai_base_url}", api_key_env="MY_VLLM_KEY")

    response = call(backend, make_request())

    assert response.text == "OK"
    assert server.requests[0].headers["authorization"] == "Bearer sk-loopback-123"
    described = json.dumps(backend.describe())
    assert "sk-loopback-123" not in described
    assert backend.describe()["api_key_env"] == "MY_VLLM_KEY"
    assert "sk-loopback-123" not in repr(backend.describe())


def test_wrong_key_is_a_401_and_is_not_retried(call, server, make_request, monkeypatch, fast):
    monkeypatch.setenv("MY_VLLM_KEY", "wrong")
    server.api_key = "right"
    backend = create_backend(f"openai:m@{server.openai_base_url}", api_key_env="MY_VLLM_KEY", **fast)

    with pytest.raises(BackendError) as caught:
        call(backend, make_request())

    assert caught.value.status == 401
    assert server.rejections == ["missing or wrong API key"]  # exactly one attempt


def test_named_key_variable_that_is_missing_fails_at_creation(monkeypatch):
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    with pytest.raises(BackendConfigError, match="NOT_SET_ANYWHERE"):
        create_backend("openai:m@http://127.0.0.1:9/v1", api_key_env="NOT_SET_ANYWHERE")


def test_default_key_is_optional_for_local_servers(call, server, make_request, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    backend = create_backend(f"openai:m@{server.openai_base_url}")
    call(backend, make_request())
    assert "authorization" not in server.requests[0].headers
    assert backend.describe()["api_key_set"] is False


def test_max_images_is_enforced_before_anything_is_sent(call, server, make_request, coded_frames):
    backend = create_backend(f"openai:m@{server.openai_base_url}", max_images=4)

    with pytest.raises(BackendError, match=r"5 images, over max_images=4") as caught:
        call(backend, make_request(coded_frames[:5], metadata={"item_id": "L1-007"}))
    assert "L1-007" in str(caught.value)
    assert server.requests == []

    call(backend, make_request(coded_frames[:4]))
    assert server.requests[0].n_images == 4


MALFORMED = {
    "not json": b"<html>502 Bad Gateway</html>",
    "json list": b"[1, 2, 3]",
    "no choices": b'{"id": "x", "object": "chat.completion", "choices": []}',
    "choices missing": b'{"id": "x", "object": "chat.completion"}',
    "null content, no reasoning": b'{"choices": [{"message": {"role": "assistant", "content": null}}]}',
    "error in a 200": b'{"error": {"message": "upstream model crashed"}}',
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_bodies_are_retried_then_a_clear_error(call, server, make_request, fast, body):
    server.reset(Reply.malformed(body))
    backend = create_backend(f"openai:m@{server.openai_base_url}", max_retries=2, **fast)

    with pytest.raises(BackendError, match="malformed response") as caught:
        call(backend, make_request())

    assert caught.value.kind == ErrorKind.REQUEST
    assert "after 3 attempts" in str(caught.value)
    assert len(server.requests) == 3
    assert backend.stats().malformed == 3


def test_one_malformed_body_then_success(call, server, make_request, fast):
    server.reset(script(Reply.malformed(b"not json"), "\\boxed{C}"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)
    response = call(backend, make_request())
    assert response.text == "\\boxed{C}"
    assert backend.stats().retries == 1


def test_null_content_with_reasoning_is_a_response_not_an_error(call, server, make_request):
    server.reset(Reply.ok(None, reasoning="Thinking until the budget ran out", finish_reason="length"))
    backend = create_backend(f"openai:m@{server.openai_base_url}")
    response = call(backend, make_request())
    assert response.text is None
    assert response.reasoning == "Thinking until the budget ran out"
    assert response.finish_reason == "length"


@pytest.mark.parametrize("status", [400, 404, 413, 422])
def test_client_errors_are_final_at_once(call, server, make_request, fast, status):
    server.reset(Reply.error(status, "bad request (loopback)"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)
    with pytest.raises(BackendError) as caught:
        call(backend, make_request())
    assert caught.value.status == status
    assert "bad request (loopback)" in str(caught.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [408, 409])
def test_408_and_409_are_retried(call, server, make_request, fast, status):
    server.reset(script(Reply.error(status), "OK"))
    backend = create_backend(f"openai:m@{server.openai_base_url}", **fast)
    assert call(backend, make_request()).text == "OK"
    assert len(server.requests) == 2


def test_thinking_styles_and_token_field(call, server, make_request):
    on = make_request(thinking=ThinkingConfig(enabled=True, budget_tokens=4096))
    off = make_request(thinking=ThinkingConfig(enabled=False))
    url = server.openai_base_url

    call(create_backend(f"openai:m@{url}"), on)
    call(create_backend(f"openai:m@{url}"), off)
    call(create_backend(f"openai:m@{url}", thinking_style="reasoning_effort"), on)
    call(create_backend(f"openai:m@{url}", thinking_style="none"), on)
    call(create_backend(f"openai:m@{url}", max_tokens_param="max_completion_tokens"), off)

    bodies = [r.body for r in server.requests]
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": True}
    assert bodies[1]["chat_template_kwargs"] == {"enable_thinking": False}
    assert bodies[2]["reasoning_effort"] == "medium" and "chat_template_kwargs" not in bodies[2]
    assert "reasoning_effort" not in bodies[3] and "chat_template_kwargs" not in bodies[3]
    assert bodies[4]["max_completion_tokens"] == 8192 and "max_tokens" not in bodies[4]


def test_extra_body_is_merged_into_the_request(call, server, make_request):
    backend = create_backend(
        f"openai:m@{server.openai_base_url}", extra_body={"top_k": 20, "repetition_penalty": 1.05}
    )
    call(backend, make_request())
    body = server.requests[0].body
    assert body["top_k"] == 20 and body["repetition_penalty"] == 1.05
    assert backend.describe()["extra_body"] == {"top_k": 20, "repetition_penalty": 1.05}
