"""The Responses API backend against the loopback server's `/v1/responses` (real HTTP, real shapes)."""

from __future__ import annotations

import base64

import openai
import pytest

from expvid.fakes.models.server import OpenAIResponsesRules, Reply, ResponsesOnlyModels, script
from expvid.models import ThinkingConfig, create_backend
from expvid.models.responses_backend import OpenAIResponsesBackend, default_api
from expvid.schema import ErrorKind


def test_responses_only_models_get_the_responses_api_and_others_keep_chat(server):
    assert default_api("gpt-5-pro") == default_api("o3-pro-2025-06-10") == "responses"
    assert default_api("gpt-5") == default_api("gpt-4o") == "chat"
    backend = create_backend(f"openai:gpt-5-pro@{server.openai_base_url}")
    assert isinstance(backend, OpenAIResponsesBackend) and backend.name == "openai-responses:gpt-5-pro"
    chat = create_backend(f"openai:gpt-4o@{server.openai_base_url}")
    assert not isinstance(chat, OpenAIResponsesBackend)
    chosen = create_backend(f"openai:gpt-4o@{server.openai_base_url}", api="responses")
    assert isinstance(chosen, OpenAIResponsesBackend)


def test_request_shape_summary_kept_apart_and_no_seed(
    server, call, make_request, coded_frames, frame_code, fast
):
    server.reset(
        Reply.ok("So the answer is \\boxed{A}", reasoning="Maybe \\boxed{C}? No.", reasoning_tokens=40),
        rules=[OpenAIResponsesRules(efforts=("high",)), ResponsesOnlyModels(["gpt-5-pro"])],
    )
    backend = create_backend(f"openai:gpt-5-pro@{server.openai_base_url}", **fast)
    request = make_request(coded_frames[:3], seed=7, thinking=ThinkingConfig(enabled=True), max_tokens=4096)
    response = call(backend, request)
    assert response.text == "So the answer is \\boxed{A}"
    assert response.reasoning == "Maybe \\boxed{C}? No."  # the summary, never in the answer
    assert response.usage.reasoning_tokens == 40
    [recorded] = server.requests
    assert recorded.path == "/v1/responses" and server.rejections == []
    body = recorded.body
    assert body["max_output_tokens"] == 4096 and body["store"] is False
    assert body["reasoning"] == {
        "effort": "high",
        "summary": "auto",
    }  # medium moved to gpt-5-pro's only level
    assert "seed" not in body and "temperature" not in body
    parts = body["input"][1]["content"]
    assert [p["type"] for p in parts] == ["input_image"] * 3 + ["input_text"]
    assert all(p["detail"] == "auto" for p in parts[:3])
    assert [frame_code(image) for image in recorded.images] == [0, 1, 2]  # in order, decodable
    sent = response.sent
    assert sent["api"] == "responses" and sent["token_limit_field"] == "max_output_tokens"
    assert sent["not_sent"]["seed"] == "the Responses API has no seed parameter"
    assert "temperature" in sent["not_sent"]


def test_unverified_organisation_and_unknown_effort_are_learned_from_400s(server, call, make_request, fast):
    server.reset("\\boxed{B}", rules=[OpenAIResponsesRules(efforts=("low", "high"), verified=False)])
    backend = create_backend(
        f"openai:o3-custom@{server.openai_base_url}",
        api="responses",
        thinking_style="reasoning_effort",
        **fast,
    )
    first = call(backend, make_request(thinking=ThinkingConfig(enabled=True, budget_tokens=8000)))
    assert first.text == "\\boxed{B}"
    assert first.sent["reasoning_effort"] == "high"  # medium refused, nearest accepted level
    assert "reasoning.summary" in first.sent["not_sent"]  # the 400's own message is kept
    assert len(server.refused) == 2
    second = call(backend, make_request(thinking=ThinkingConfig(enabled=True, budget_tokens=8000)))
    assert second.text == "\\boxed{B}" and len(server.refused) == 2  # learned: right the first time


def test_cut_answers_refusals_and_failed_responses(server, call, make_request, fast):
    backend = create_backend(f"openai:gpt-4o@{server.openai_base_url}", api="responses", **fast)
    server.reset(Reply.ok(None, reasoning="thinking...", finish_reason="length"))
    cut = call(backend, make_request())
    assert cut.text == "" and cut.finish_reason == "length"  # recorded as a cut answer, not retried
    server.reset(Reply.refused("I can't help with that."))
    refused = call(backend, make_request())
    assert refused.refusal == "I can't help with that." and refused.text == ""
    failed = (
        b'{"object": "response", "status": "failed", "output": [], '
        b'"error": {"code": "server_error", "message": "The model failed."}}'
    )
    server.reset(script(Reply.malformed(failed), "\\boxed{D}"))
    assert call(backend, make_request()).text == "\\boxed{D}"  # a failed response is asked again
    server.reset(Reply.error(400, "bad input"))
    with pytest.raises(Exception) as caught:
        call(backend, make_request())
    assert getattr(caught.value, "kind", None) == ErrorKind.REQUEST
    assert create_backend(f"openai:gpt-4o@{server.openai_base_url}", api="responses").input_modes() == (
        "images",
    )


def test_cache_keys_differ_between_the_two_apis(server, make_request, tmp_path):
    chat = create_backend(f"openai:gpt-4o@{server.openai_base_url}", cache_dir=tmp_path)
    responses = create_backend(f"openai:gpt-4o@{server.openai_base_url}", cache_dir=tmp_path, api="responses")
    request = make_request()
    assert chat.request_hash(request) != responses.request_hash(request)


def test_official_openai_client_reads_the_loopback_responses(server, coded_frames):
    server.reset(Reply.ok("It is \\boxed{A}", reasoning="summary text"), rules=[OpenAIResponsesRules()])
    client = openai.OpenAI(api_key="x", base_url=server.openai_base_url, max_retries=0)
    image = "data:image/jpeg;base64," + base64.b64encode(coded_frames[0]).decode()
    response = client.responses.create(
        model="gpt-5",
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_image", "image_url": image, "detail": "auto"},
                    {"type": "input_text", "text": "Which tool?"},
                ],
            }
        ],
        max_output_tokens=64,
        reasoning={"effort": "low", "summary": "auto"},
    )
    assert response.output_text == "It is \\boxed{A}" and response.status == "completed"
    assert response.output[0].type == "reasoning" and response.usage is not None
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="gpt-5", input="hi", temperature=0.1)
    assert caught.value.code == "unsupported_parameter" and caught.value.param == "temperature"
