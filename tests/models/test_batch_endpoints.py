"""The loopback batch endpoints, driven by the providers' own SDKs, and expvid's batch clients on them."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import anthropic
import openai
import pytest

from expvid.fakes.models.server import BatchPlan, OpenAIReasoningRules, Reply
from expvid.models import create_backend
from expvid.models.batch import BatchLabel, batch_adapter


def _line(custom_id: str, model: str = "gpt-4o", **body: object) -> str:
    payload = {"model": model, "messages": [{"role": "user", "content": "Which tool?"}], **body}
    return json.dumps(
        {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": payload}
    )


def test_openai_batch_lifecycle_with_the_official_client(server):
    server.reset("\\boxed{A}", rules=[OpenAIReasoningRules(models=["o3"])])
    client = openai.OpenAI(api_key="x", base_url=server.openai_base_url, max_retries=0)
    lines = [_line("a"), _line("b", model="o3", max_tokens=10), _line("c")]
    uploaded = client.files.create(file=("in.jsonl", "\n".join(lines).encode()), purpose="batch")
    assert uploaded.purpose == "batch" and uploaded.bytes > 0
    batch = client.batches.create(
        input_file_id=uploaded.id,
        endpoint="/v1/chat/completions",
        completion_window="24h",
        metadata={"k": "v"},
    )
    seen = [batch.status]
    while batch.status not in ("completed", "failed", "expired", "cancelled"):
        batch = client.batches.retrieve(batch.id)
        seen.append(batch.status)
    assert seen == ["validating", "in_progress", "finalizing", "completed"]
    assert batch.request_counts is not None and batch.request_counts.model_dump() == {
        "total": 3,
        "completed": 2,
        "failed": 1,
    }
    output = [json.loads(x) for x in client.files.content(batch.output_file_id).text.splitlines()]
    assert {x["custom_id"] for x in output} == {"a", "c"}
    assert output[0]["response"]["status_code"] == 200
    assert output[0]["response"]["body"]["choices"][0]["message"]["content"] == "\\boxed{A}"
    [error] = [json.loads(x) for x in client.files.content(batch.error_file_id).text.splitlines()]
    assert error["custom_id"] == "b" and error["response"]["status_code"] == 400
    assert error["response"]["body"]["error"]["code"] == "unsupported_parameter"  # o3 refuses max_tokens
    assert {r.via for r in server.requests} == {batch.id}
    assert client.batches.list().data[0].id == batch.id


def test_openai_batch_validation_expiry_and_cancel(server):
    client = openai.OpenAI(api_key="x", base_url=server.openai_base_url, max_retries=0)
    server.reset("ok")
    bad = client.files.create(file=("in.jsonl", (_line("a") + "\n" + _line("a")).encode()), purpose="batch")
    batch = client.batches.create(
        input_file_id=bad.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    batch = client.batches.retrieve(batch.id)
    assert batch.status == "failed" and batch.errors is not None
    assert batch.errors.data[0].code == "duplicate_custom_id" and batch.errors.data[0].line == 2

    server.batches.plan = BatchPlan(outcome="expire", run_before_expiry=1)
    good = client.files.create(
        file=("in.jsonl", "\n".join([_line("a"), _line("b")]).encode()), purpose="batch"
    )
    batch = client.batches.create(
        input_file_id=good.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    while batch.status not in ("completed", "expired"):
        batch = client.batches.retrieve(batch.id)
    assert batch.status == "expired" and batch.expired_at is not None
    [expired] = [json.loads(x) for x in client.files.content(batch.error_file_id).text.splitlines()]
    assert expired["custom_id"] == "b" and expired["response"] is None
    assert expired["error"]["code"] == "batch_expired"

    server.batches.plan = BatchPlan(outcome="stall")
    batch = client.batches.create(
        input_file_id=good.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    client.batches.retrieve(batch.id)
    assert client.batches.cancel(batch.id).status == "cancelling"
    assert client.batches.retrieve(batch.id).status == "cancelled"
    with pytest.raises(openai.ConflictError):
        client.batches.cancel(batch.id)


def test_anthropic_message_batches_with_the_official_client(server):
    server.reset(Reply.ok("\\boxed{B}"))
    client = anthropic.Anthropic(api_key="k", base_url=server.anthropic_base_url, max_retries=0)
    params = {"model": "claude-sonnet-4", "max_tokens": 64, "messages": [{"role": "user", "content": "Q?"}]}
    requests = [
        {"custom_id": "one", "params": params},
        {"custom_id": "two", "params": {**params, "max_tokens": "many"}},  # invalid: an errored result
    ]
    batch = client.messages.batches.create(requests=requests)  # type: ignore[arg-type]
    assert batch.processing_status == "in_progress" and batch.request_counts.processing == 2
    batch = client.messages.batches.retrieve(batch.id)
    assert batch.processing_status == "ended" and batch.results_url is not None
    assert (batch.request_counts.succeeded, batch.request_counts.errored) == (1, 1)
    results = {entry.custom_id: entry.result for entry in client.messages.batches.results(batch.id)}
    assert results["one"].type == "succeeded" and results["one"].message.content[0].text == "\\boxed{B}"  # type: ignore[union-attr]
    assert results["two"].type == "errored"
    assert results["two"].error.error.type == "invalid_request_error"  # type: ignore[union-attr]
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.create(requests=[{"custom_id": "has/slash", "params": params}])  # type: ignore[list-item]


def test_batch_adapter_lines_are_the_online_bodies(server, make_request, coded_frames, tmp_path: Path):
    server.reset("\\boxed{A}")
    backend = create_backend(f"openai:gpt-4o@{server.openai_base_url}")
    adapter = batch_adapter(backend)
    request = make_request(coded_frames[:2], seed=3)

    async def go() -> tuple[dict, object]:
        try:
            online = await backend.generate(request)
            line, sent = adapter.line("x1-0", request)
            path = tmp_path / "in.jsonl"
            path.write_text(json.dumps(line) + "\n")
            label = BatchLabel(run_uid="r1", chunk="c1")
            file_id = await adapter.api.upload(path)
            handle = await adapter.api.create(path, input_file_id=file_id, label=label)
            found = await adapter.api.lookup(label, since=datetime.now(UTC), n_requests=1)
            assert found.found == [handle]
            while not (await adapter.api.poll(handle)).ended:
                pass
            [result] = await adapter.api.results(handle, ["x1-0"])
            assert result.body is not None
            return {"online": online, "sent": sent, "line": line}, adapter.parse(result.body)
        finally:
            await backend.aclose()

    parts, batched = asyncio.run(go())
    online_body, batch_body = server.requests[0].body, server.requests[1].body
    assert online_body == batch_body  # byte for byte the same request
    assert parts["line"]["url"] == "/v1/chat/completions"
    assert batched.text == parts["online"].text and parts["sent"] == parts["online"].sent


def test_a_responses_batch_carries_responses_bodies(server, make_request, tmp_path: Path):
    server.reset(Reply.ok("\\boxed{C}", reasoning="a summary"))
    backend = create_backend(f"openai:o3-pro@{server.openai_base_url}")  # served only on /v1/responses
    adapter = batch_adapter(backend)
    assert adapter.endpoint == "/v1/responses"

    async def go() -> object:
        try:
            line, sent = adapter.line("x2-0", make_request(max_tokens=512))
            assert line["url"] == "/v1/responses" and line["body"]["max_output_tokens"] == 512
            assert sent["api"] == "responses"
            path = tmp_path / "in.jsonl"
            path.write_text(json.dumps(line) + "\n")
            label = BatchLabel(run_uid="r2", chunk="c2")
            handle = await adapter.api.create(path, input_file_id=await adapter.api.upload(path), label=label)
            while not (await adapter.api.poll(handle)).ended:
                pass
            [result] = await adapter.api.results(handle, ["x2-0"])
            assert result.body is not None and result.body["object"] == "response"
            return adapter.parse(result.body)
        finally:
            await backend.aclose()

    parsed = asyncio.run(go())
    assert parsed.text == "\\boxed{C}" and parsed.reasoning == "a summary"  # type: ignore[attr-defined]
    [recorded] = server.requests
    assert recorded.protocol == "openai-responses" and recorded.via.startswith("batch_")


def test_gemini_batch_mode_with_the_official_client(server):
    """The loopback's Gemini batch mode driven by google-genai: create with inlined requests and a
    display name, get until done, inlined responses by key in input order, list, cancel."""
    from google import genai
    from google.genai import types

    server.reset(Reply.ok("\\boxed{B}"))
    client = genai.Client(
        api_key="k",
        http_options=types.HttpOptions(
            base_url=server.gemini_base_url, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    requests = [
        types.InlinedRequest(contents="Which tool?", metadata={"key": "one"}),
        types.InlinedRequest(
            contents=[types.Content(role="user", parts=[types.Part(text="Which step?")])],
            config=types.GenerateContentConfig(temperature=0.1, max_output_tokens=20, seed=7),
            metadata={"key": "two"},
        ),
    ]
    job = client.batches.create(
        model="gemini-2.5-flash", src=requests, config={"display_name": "expvid-r-c-a1"}
    )
    assert job.state == types.JobState.JOB_STATE_PENDING and job.display_name == "expvid-r-c-a1"
    while not job.done:
        job = client.batches.get(name=job.name)
    assert job.state == types.JobState.JOB_STATE_SUCCEEDED and job.dest is not None
    answers = [
        (r.metadata, r.response.text if r.response else None) for r in job.dest.inlined_responses or []
    ]
    assert answers == [({"key": "one"}, "\\boxed{B}"), ({"key": "two"}, "\\boxed{B}")]
    second = server.requests[1].body
    assert second["generationConfig"] == {"temperature": 0.1, "maxOutputTokens": 20, "seed": 7}
    assert {r.via for r in server.requests} == {job.name}
    assert [j.name for j in client.batches.list(config={"page_size": 1})] == [job.name]
    server.batches.plan = BatchPlan(outcome="stall")
    stalled = client.batches.create(model="gemini-2.5-flash", src=requests[:1])
    client.batches.get(name=stalled.name)
    client.batches.cancel(name=stalled.name)
    assert client.batches.get(name=stalled.name).state == types.JobState.JOB_STATE_CANCELLED
