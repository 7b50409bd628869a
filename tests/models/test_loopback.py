"""The loopback server itself, spoken to with plain httpx: validation, recording, faults, responders."""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Iterator

import httpx2
import pytest
from PIL import Image

from expvid.fakes.models.server import LoopbackServer, Reply, echo, script


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), (0, 128, 255)).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    """One client for the module: building an httpx client loads TLS roots (~0.2 s), a waste per call."""
    with httpx2.Client(timeout=10) as client:
        yield client


def _chat(http: httpx2.Client, server: LoopbackServer, body: dict, **headers: str) -> httpx2.Response:
    return http.post(f"{server.openai_base_url}/chat/completions", json=body, headers=headers)


def _image_part(data: bytes, mime: str = "image/jpeg") -> dict:
    url = f"data:{mime};base64,{base64.b64encode(data).decode()}"
    return {"type": "image_url", "image_url": {"url": url}}


def test_models_route_and_a_valid_chat_completion(http, server, coded_frames):
    models = http.get(f"{server.openai_base_url}/models").json()
    assert [m["id"] for m in models["data"]] == ["loopback"]

    server.reset(Reply.ok("fine", reasoning="r", reasoning_tokens=2))
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [_image_part(coded_frames[0]), {"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": "earlier answer"},
            {"role": "user", "content": [_image_part(_png(), "image/png")]},
        ],
    }
    answer = _chat(http, server, body).json()
    assert answer["object"] == "chat.completion"
    assert answer["choices"][0]["message"] == {
        "role": "assistant",
        "content": "fine",
        "reasoning_content": "r",
    }
    assert answer["usage"]["completion_tokens_details"] == {"reasoning_tokens": 2}
    (received,) = server.requests
    assert received.images == [coded_frames[0], _png()]
    assert received.image_mimes == ["image/jpeg", "image/png"]
    assert received.texts == ["hi", "earlier answer"]
    assert received.roles == ["user", "assistant", "user"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"messages": [{"role": "user", "content": "x"}]}, "model must be a string"),
        ({"model": "m", "messages": []}, "messages must be a non-empty list"),
        ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "role 'robot'"),
        ({"model": "m", "messages": [{"role": "user", "content": [{"type": "video"}]}]}, "'video'"),
        (
            {"model": "m", "messages": [{"role": "user", "content": [_image_part(b"not an image at all")]}]},
            "image does not decode",
        ),
        (
            {"model": "m", "messages": [{"role": "user", "content": [_image_part(_png(), "image/jpeg")]}]},
            "declared image/jpeg but the bytes are image/png",
        ),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "http://x/a.jpg"}}],
                    }
                ],
            },
            "only base64 data URLs",
        ),
        ({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, "temperature"),
    ],
)
def test_bad_request_shapes_are_rejected_with_400(http, server, body, reason):
    response = _chat(http, server, body)
    assert response.status_code == 400
    assert reason in response.json()["error"]["message"]
    assert server.requests == []
    assert len(server.rejections) == 1 and reason in server.rejections[0]


def test_non_json_body_is_rejected(http, server):
    response = http.post(f"{server.openai_base_url}/chat/completions", content=b"{oops")
    assert response.status_code == 400
    assert server.rejections == ["body is not JSON"]


def test_api_key_is_enforced_when_configured(http, server):
    server.api_key = "secret"
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    assert _chat(http, server, body).status_code == 401
    assert _chat(http, server, body, Authorization="Bearer secret").status_code == 200


def test_faults_look_like_the_real_thing(http, server):
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    server.reset(script(Reply.rate_limited(7), Reply.error(503), Reply.malformed(b"<html>"), Reply.dropped()))

    limited = _chat(http, server, body)
    assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
    assert limited.json()["error"]["type"] == "invalid_request_error"
    assert _chat(http, server, body).status_code == 503
    malformed = _chat(http, server, body)
    assert malformed.status_code == 200 and malformed.content == b"<html>"
    with pytest.raises(httpx2.RemoteProtocolError):
        _chat(http, server, body)
    exhausted = _chat(http, server, body)  # the script ran out: a loud 500, never a silent default
    assert exhausted.status_code == 500 and "script exhausted" in exhausted.text
    assert len(server.requests) == 5


def test_delay_is_real_and_counted_in_flight(http, server):
    server.reset(Reply.slow("late", delay_s=0.3))
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    started = time.monotonic()
    assert _chat(http, server, body).json()["choices"][0]["message"]["content"] == "late"
    assert time.monotonic() - started >= 0.3
    assert server.max_in_flight == 1 and server.in_flight == 0


def test_responders_function_and_errors(http, server):
    body = {"model": "vision-7b", "messages": [{"role": "user", "content": "x"}]}
    server.reset(echo)
    assert (
        _chat(http, server, body).json()["choices"][0]["message"]["content"]
        == "model=vision-7b images=0 texts=1"
    )

    def broken(_request):
        raise KeyError("no such item")

    server.reset(broken)
    response = _chat(http, server, body)
    assert response.status_code == 500
    assert server.responder_errors == ["KeyError: 'no such item'"]


def test_script_then_falls_back(http, server):
    server.reset(script("first", then="afterwards"))
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    texts = [_chat(http, server, body).json()["choices"][0]["message"]["content"] for _ in range(3)]
    assert texts == ["first", "afterwards", "afterwards"]


def test_anthropic_and_gemini_routes_validate_their_own_shapes(http, server):
    bad_anthropic = http.post(
        f"{server.anthropic_base_url}/v1/messages",
        json={"model": "c", "messages": [{"role": "user", "content": "x"}]},
    )
    assert bad_anthropic.status_code == 400
    assert (
        bad_anthropic.json()["type"] == "error" and "max_tokens" in bad_anthropic.json()["error"]["message"]
    )

    bad_gemini = http.post(f"{server.gemini_base_url}/v1beta/models/g:generateContent", json={})
    assert bad_gemini.status_code == 400 and bad_gemini.json()["error"]["status"] == "INVALID_ARGUMENT"

    streaming = http.post(
        f"{server.gemini_base_url}/v1beta/models/g:streamGenerateContent", json={}, timeout=10
    )
    assert streaming.status_code == 404

    good = http.post(
        f"{server.gemini_base_url}/v1beta/models/g:generateContent",
        json={"contents": [{"role": "user", "parts": [{"text": "hello"}]}]},
    )
    assert good.json()["candidates"][0]["content"]["parts"] == [{"text": "OK"}]
    assert server.requests[-1].model == "g"


def test_servers_get_their_own_ports_and_stop_cleanly(http):
    with LoopbackServer("one") as first, LoopbackServer("two") as second:
        assert first.port != second.port
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        assert _chat(http, second, body).json()["choices"][0]["message"]["content"] == "two"
    with pytest.raises(httpx2.ConnectError):
        http.get(f"{first.openai_base_url}/models")
