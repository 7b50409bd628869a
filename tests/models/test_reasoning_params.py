"""Reasoning models' parameter rules, against a loopback server that answers exactly as OpenAI does.

The server refuses `max_tokens`, a non-default temperature, `top_p` and unknown effort levels with
OpenAI's own 400 bodies. Known models are phrased right the first time; unknown ones are learned
from the first 400, once per endpoint, and every prediction records what was really sent.
"""

from __future__ import annotations

import asyncio

import pytest

from expvid.fakes.models.server import LoopbackServer, OpenAIReasoningRules, Reply
from expvid.models import BackendError, ThinkingConfig, create_backend
from expvid.models.options import BackendOptions
from expvid.models.param_fallback import adjustment_for, unsupported_from_error
from expvid.models.param_rules import chat_rules


def test_known_reasoning_model_is_phrased_right_the_first_time(call, server, make_request):
    server.reset("\\boxed{A}", rules=[OpenAIReasoningRules()])
    backend = create_backend(f"openai:gpt-5@{server.openai_base_url}")

    response = call(backend, make_request(temperature=0.1, max_tokens=8192, seed=3))

    assert response.text == "\\boxed{A}"
    assert server.refused == []  # no 400 at all
    (received,) = server.requests
    assert received.body["max_completion_tokens"] == 8192
    assert "max_tokens" not in received.body and "temperature" not in received.body
    assert response.sent["temperature"] is None
    assert response.sent["token_limit_field"] == "max_completion_tokens"
    assert "default temperature (1)" in response.sent["not_sent"]["temperature"]
    assert response.sent["seed"] == 3


def test_unknown_reasoning_model_is_learned_from_its_400s_once(server, make_request):
    """Two parameters refused in turn: each is fixed by one resend, then remembered for the run."""
    server.reset("\\boxed{B}", rules=[OpenAIReasoningRules()])
    backend = create_backend(f"openai:house-reasoner@{server.openai_base_url}")

    async def run() -> list:
        try:
            first = await backend.generate(make_request(question="q1", temperature=0.1))
            rest = await asyncio.gather(
                *(backend.generate(make_request(question=f"q{i}")) for i in range(2, 6))
            )
            return [first, *rest]
        finally:
            await backend.aclose()

    responses = asyncio.run(run())

    assert [r.text for r in responses] == ["\\boxed{B}"] * 5
    refused = [r.body for r in server.refused]
    assert len(refused) == 2  # max_tokens, then temperature: only the first request met them
    assert "max_tokens" in refused[0] and "temperature" in refused[0]
    assert "max_completion_tokens" in refused[1] and refused[1]["temperature"] == 0.1
    assert all("max_completion_tokens" in r.body and "temperature" not in r.body for r in server.requests)
    for response in responses:
        assert response.sent["temperature"] is None
        assert response.sent["token_limit_field"] == "max_completion_tokens"
        assert "Only the default (1) value is supported" in response.sent["not_sent"]["temperature"]
    learned = {entry["param"]: entry for entry in backend.describe()["param_fallbacks"]}
    assert (
        learned["max_tokens"]["action"] == "rename" and learned["max_tokens"]["to"] == "max_completion_tokens"
    )
    assert learned["temperature"]["action"] == "omit"
    assert backend.stats().param_fallbacks == 2
    assert backend.stats().retries == 0  # fallbacks are not transport retries


def test_concurrent_first_requests_all_recover(server, make_request):
    """A burst that all meets the 400 before anyone has learned: every request still succeeds."""
    server.reset(
        Reply.ok("ok", delay_s=0.05), rules=[OpenAIReasoningRules(temperature_error="unsupported_parameter")]
    )
    backend = create_backend(f"openai:o-like@{server.openai_base_url}", concurrency=8)

    async def run() -> list:
        try:
            return await asyncio.gather(*(backend.generate(make_request(question=f"q{i}")) for i in range(8)))
        finally:
            await backend.aclose()

    responses = asyncio.run(run())
    assert [r.text for r in responses] == ["ok"] * 8
    assert all(r.sent["temperature"] is None for r in responses)
    assert len(server.requests) == 8


def test_reasoning_effort_moves_to_the_nearest_level_the_server_lists(call, server, make_request):
    server.reset("ok", rules=[OpenAIReasoningRules(efforts=("low", "medium", "high"))])
    backend = create_backend(f"openai:gpt-5@{server.openai_base_url}")  # gpt-5 knows "minimal"...

    response = call(backend, make_request(thinking=ThinkingConfig(enabled=False)))

    (refused,) = server.refused  # ...this server does not
    assert refused.body["reasoning_effort"] == "minimal"
    assert server.requests[0].body["reasoning_effort"] == "low"
    assert response.sent["reasoning_effort"] == "low"


def test_a_parameter_the_user_asked_for_is_never_dropped(call, server, make_request, fast):
    server.reset("ok", rules=[OpenAIReasoningRules()])
    backend = create_backend(f"openai:gpt-5@{server.openai_base_url}", extra_body={"top_p": 0.9}, **fast)

    with pytest.raises(BackendError) as caught:
        call(backend, make_request())

    assert caught.value.status == 400
    assert "'top_p' is not supported" in str(caught.value)
    assert caught.value.sent["token_limit_field"] == "max_completion_tokens"
    assert len(server.refused) == 1  # final at once: a 400 is not retried


def test_learning_is_per_endpoint(server, make_request):
    """Across several servers of one model, each endpoint's rules are its own."""
    with LoopbackServer("plain") as other:
        server.reset("strict", rules=[OpenAIReasoningRules()])
        backend = create_backend(
            f"openai:house-model@{server.openai_base_url},{other.openai_base_url}", concurrency=2
        )

        async def run() -> list:
            try:
                return await asyncio.gather(
                    *(backend.generate(make_request(question=f"q{i}")) for i in range(12))
                )
            finally:
                await backend.aclose()

        responses = asyncio.run(run())
        by_text = {text: [r for r in responses if r.text == text] for text in ("strict", "plain")}
        assert by_text["strict"] and by_text["plain"]
        assert all(r.sent["temperature"] is None for r in by_text["strict"])
        assert all(r.sent["temperature"] == 0.1 for r in by_text["plain"])
        assert all("max_tokens" in r.body and r.body["temperature"] == 0.1 for r in other.requests)
        endpoints = {entry["endpoint"] for entry in backend.describe()["param_fallbacks"]}
        assert endpoints == {server.openai_base_url}


def test_refusal_is_an_answer_not_a_transport_failure(call, server, make_request, fast):
    server.reset(Reply.refused("I'm sorry, but I can't help with that."))
    backend = create_backend(f"openai:gpt-5@{server.openai_base_url}", **fast)

    response = call(backend, make_request())

    assert response.refusal == "I'm sorry, but I can't help with that."
    assert response.text == ""  # no content: scored as an empty (unparseable) reply
    assert len(server.requests) == 1  # not retried
    assert backend.stats().malformed == 0


@pytest.mark.parametrize(
    ("body", "param", "kind", "replacement"),
    [
        (
            '{"error": {"message": "Unsupported parameter: \'max_tokens\' is not supported with this model. '
            'Use \'max_completion_tokens\' instead.", "type": "invalid_request_error", '
            '"param": "max_tokens", "code": "unsupported_parameter"}}',
            "max_tokens",
            "parameter",
            "max_completion_tokens",
        ),
        (
            '{"error": {"code": "unsupported_parameter", "type": "invalid_request_error", "error": {"code": '
            '"unsupported_parameter", "param": "top_p", "message": "Unsupported parameter: \'top_p\' is not '
            'supported with this model."}, "param": "top_p", "status": 400}}',
            "top_p",
            "parameter",
            None,
        ),
        (
            '{"error":{"message":"Unsupported value: \'reasoning_effort\' does not support \'none\' with this '
            "model. Supported values are: 'minimal', 'low', 'medium', and 'high'.\",\"type\":\"invalid_request_error\"}}",
            "reasoning_effort",
            "value",
            None,
        ),
        (
            '{"error": {"message": "Unrecognized request argument supplied: chat_template_kwargs", '
            '"type": "invalid_request_error", "param": null, "code": null}}',
            "chat_template_kwargs",
            "parameter",
            None,
        ),
        (
            "litellm.UnsupportedParamsError: azure does not support parameters: ['top_p'], for model=o3.",
            "top_p",
            "parameter",
            None,
        ),
    ],
)
def test_error_bodies_of_real_servers_are_read(body, param, kind, replacement):
    found = unsupported_from_error(body)
    assert found is not None
    assert (found.param, found.kind, found.replacement) == (param, kind, replacement)


def test_effort_listing_and_unrelated_400s():
    effort = unsupported_from_error(
        '{"error":{"message":"Unsupported value: \'reasoning_effort\' does not support \'none\' with this model. '
        "Supported values are: 'minimal', 'low', 'medium', and 'high'.\"}}"
    )
    assert effort is not None and effort.supported_values == ("minimal", "low", "medium", "high")
    adjustment = adjustment_for(effort, "none")
    assert adjustment is not None and (adjustment.action, adjustment.to) == ("value", "minimal")
    assert (
        unsupported_from_error('{"error": {"message": "Invalid image data", "code": "invalid_image"}}')
        is None
    )
    messages = unsupported_from_error(
        '{"error": {"message": "Unsupported value: \'messages[0].role\' does not support \'system\' with this '
        'model.", "param": "messages[0].role", "code": "unsupported_value"}}'
    )
    assert messages is not None and adjustment_for(messages, "system") is None  # never adapted


@pytest.mark.parametrize(
    ("model", "url", "field", "temperature"),
    [
        ("gpt-5", "https://api.openai.com/v1", "max_completion_tokens", "omit"),
        ("gpt-5-mini-2025-08-07", "http://proxy:4000/v1", "max_completion_tokens", "omit"),
        ("openai/o3-mini", "https://openrouter.ai/api/v1", "max_completion_tokens", "omit"),
        ("gpt-5.1", "https://api.openai.com/v1", "max_completion_tokens", "omit_with_reasoning"),
        ("gpt-5-chat-latest", "https://api.openai.com/v1", "max_completion_tokens", "send"),
        ("gpt-4o", "https://api.openai.com/v1", "max_completion_tokens", "send"),
        ("deepseek-reasoner", "https://api.deepseek.com", "max_tokens", "omit"),
        ("Qwen2.5-VL-7B-Instruct", "http://127.0.0.1:8000/v1", "max_tokens", "send"),
    ],
)
def test_known_rules(model, url, field, temperature):
    rules = chat_rules(model, url, BackendOptions())
    assert (rules.token_limit_field, rules.temperature) == (field, temperature)


def test_explicit_options_override_the_rules():
    options = BackendOptions(max_tokens_param="max_tokens", send_temperature=True, thinking_style="none")
    rules = chat_rules("gpt-5", "https://api.openai.com/v1", options)
    assert (rules.token_limit_field, rules.temperature, rules.thinking_style) == (
        "max_tokens",
        "send",
        "none",
    )
