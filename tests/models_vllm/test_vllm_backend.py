"""`vllm:PATH` through `create_backend`: a managed server behind the OpenAI-compatible backend."""

from __future__ import annotations

import asyncio
import io
import json
import time

import numpy as np
import pytest
from PIL import Image

from expvid.models import (
    BackendConfigError,
    BackendError,
    GenerateRequest,
    ImagePart,
    Message,
    TextPart,
    create_backend,
)
from expvid.models.vllm_manager import LOG_FILE_NAME


def jpeg(value: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.full((32, 32, 3), value, dtype=np.uint8)).save(buffer, "JPEG")
    return buffer.getvalue()


def ask(n_images: int = 3) -> GenerateRequest:
    content = [*(ImagePart(data=jpeg(40 * i)) for i in range(n_images)), TextPart(text="Which tool is used?")]
    return GenerateRequest(messages=[Message(role="user", content=content)], temperature=0.1, max_tokens=64)


def run(coroutine):
    return asyncio.run(coroutine)


async def generate_and_close(backend, request):
    try:
        return await backend.generate(request)
    finally:
        await backend.aclose()


def test_vllm_spec_starts_the_server_and_answers_through_it(
    fake_vllm, model_dir, tmp_path, record, wait_dead
):
    backend = create_backend(
        f"vllm:{model_dir}",
        vllm_executable=fake_vllm,
        tensor_parallel_size=2,
        max_images=16,
        log_dir=tmp_path / "run" / "logs",
    )
    seen = record()
    argv = seen["argv"]
    assert argv[argv.index("--tensor-parallel-size") + 1] == "2"
    assert json.loads(argv[argv.index("--limit-mm-per-prompt") + 1]) == {"image": 16}
    described = backend.describe()
    assert described["kind"] == "vllm" and described["served_model_name"] == "Qwen2.5-VL-7B-Instruct"
    assert described["log_path"] == str(tmp_path / "run" / "logs" / LOG_FILE_NAME)
    assert described["client"]["base_url"].startswith("http://127.0.0.1:")

    response = run(generate_and_close(backend, ask(3)))
    assert response.text == "model=Qwen2.5-VL-7B-Instruct images=3 texts=1"
    assert wait_dead(seen["pid"]) and not backend.server.alive()  # aclose() stopped it
    assert backend.server.returncode == 0  # by SIGTERM, in order


def test_the_cache_key_names_the_checkpoint_not_the_port(fake_vllm, model_dir, tmp_path):
    options = {"vllm_executable": fake_vllm, "cache_dir": tmp_path / "cache"}
    first = create_backend(f"vllm:{model_dir}", **options)
    second = create_backend(f"vllm:{model_dir}", **options)
    try:
        assert first.server.port != second.server.port
        request = ask(2)
        assert first.client.request_hash(request) == second.client.request_hash(request)
        fresh = run(first.generate(request))
        again = run(second.generate(request))
        assert fresh.cached is False and again.cached is True and again.text == fresh.text
        other_args = create_backend(f"vllm:{model_dir}", vllm_args=["--max-model-len", "4096"], **options)
        try:
            assert other_args.client.request_hash(request) != first.client.request_hash(request)
        finally:
            run(other_args.aclose())
    finally:
        run(first.aclose())
        run(second.aclose())


def test_a_server_that_dies_mid_run_fails_requests_at_once_with_its_log(fake_vllm, model_dir, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_EXIT_AFTER_S", "2.0")
    backend = create_backend(f"vllm:{model_dir}", vllm_executable=fake_vllm, backoff_base_s=5.0)
    try:
        assert run(backend.generate(ask(1))).text.startswith("model=")
        deadline = time.monotonic() + 15
        while backend.server.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        with pytest.raises(BackendError) as raised:
            run(backend.generate(ask(1)))
        assert time.monotonic() - started < 2  # no retries against a dead port
        assert "exited with code 1" in str(raised.value)
        assert "engine core died unexpectedly" in str(raised.value)
    finally:
        run(backend.aclose())


def test_an_api_key_named_by_env_reaches_server_and_client(fake_vllm, model_dir, record, monkeypatch):
    monkeypatch.setenv("MY_VLLM_KEY", "sk-local-123")
    backend = create_backend(f"vllm:{model_dir}", vllm_executable=fake_vllm, api_key_env="MY_VLLM_KEY")
    assert record()["api_key_set"] is True
    assert "sk-local-123" not in json.dumps(backend.describe())
    assert run(generate_and_close(backend, ask(1))).text.startswith("model=")
    assert "sk-local-123" not in " ".join(backend.server.command)  # never on the command line


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("vllm:", {}, r"checkpoint path is missing \(vllm:PATH\)"),
        ("vllm:./no-such-checkpoint", {}, "no such checkpoint folder"),
        (
            "vllm:Qwen/Qwen2.5-VL-7B-Instruct",
            {"vllm_executable": "no-vllm-here-xyz"},
            "vLLM is not installed",
        ),
        ("vllm:Qwen/Qwen2.5-VL-7B-Instruct", {"tensor_parallel_size": 0}, "tensor_parallel_size"),
    ],
)
def test_configuration_mistakes_fail_before_anything_starts(spec, options, message):
    with pytest.raises(BackendConfigError, match=message):
        create_backend(spec, **options)


def test_an_evaluation_with_vllm_logs_into_the_run_and_stops_the_server(
    fake_vllm, model_dir, sample_dir, tmp_path, record, wait_dead
):
    from expvid.run.config import EvalConfig
    from expvid.run.evaluate import evaluate
    from expvid.suites.protocol import FrameOptions

    out = tmp_path / "run"
    config = EvalConfig(
        data=sample_dir,
        model=f"vllm:{model_dir}",
        out=out,
        tasks=["tools"],
        limit=3,
        frames=FrameOptions(counts={"L1": 4}),
        cache_dir=None,
        n_bootstrap=10,
        # What the runner passes once wired (see docs/open-weights.md): logs go to the run directory.
        backend_options={"vllm_executable": fake_vllm, "log_dir": out / "logs"},
    )
    result = asyncio.run(evaluate(config, command=["test"], show_progress=False))
    assert result.generated == 3 and result.failed == 0
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [p["response"] for p in predictions] == ["model=Qwen2.5-VL-7B-Instruct images=4 texts=1"] * 3
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["backend"]["log_path"] == str(out / "logs" / LOG_FILE_NAME)
    assert "Uvicorn running" in (out / "logs" / LOG_FILE_NAME).read_text()
    assert wait_dead(record()["pid"])  # the evaluation stopped its server
