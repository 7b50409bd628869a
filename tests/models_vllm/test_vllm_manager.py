"""`VLLMServer` against a stand-in `vllm serve`: start-up, health waits, crash reports, shutdown."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import httpx2
import pytest

from expvid.models import BackendConfigError
from expvid.models.vllm_manager import LOG_FILE_NAME, VLLMServer, VLLMStartError


def test_starts_waits_for_health_serves_and_stops(fake_vllm, model_dir, tmp_path, record, monkeypatch, alive):
    monkeypatch.setenv("FAKE_VLLM_DELAY_S", "1.0")  # "loading the model"
    server = VLLMServer(
        str(model_dir), executable=fake_vllm, tensor_parallel_size=2, log_dir=tmp_path / "logs"
    )
    started = time.monotonic()
    server.start()
    try:
        assert time.monotonic() - started >= 1.0  # it waited for the load, not just for the process
        assert server.alive()
        models = httpx2.get(f"{server.base_url}/models").json()
        assert [m["id"] for m in models["data"]] == ["Qwen2.5-VL-7B-Instruct"]
        seen = record()
        assert seen["argv"][:2] == ["serve", str(model_dir)]
        assert seen["argv"][seen["argv"].index("--port") + 1] == str(server.port)
        assert seen["argv"][seen["argv"].index("--tensor-parallel-size") + 1] == "2"
        assert seen["pid"] == server.process.pid
    finally:
        server.stop()
    assert not alive(seen["pid"]) and server.returncode is not None
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", server.port)) != 0  # nothing listens any more
    log = (tmp_path / "logs" / LOG_FILE_NAME).read_text()
    assert log.startswith("# expvid: ") and "serve" in log.splitlines()[0]
    assert "loading model" in log and "Uvicorn running" in log


def test_a_given_port_is_used_and_a_busy_one_refused_before_starting(fake_vllm, model_dir):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(BackendConfigError, match=f"port {port} .* already in use"):
            VLLMServer(str(model_dir), executable=fake_vllm, port=port).start()
    with VLLMServer(str(model_dir), executable=fake_vllm, port=port) as server:
        assert server.port == port
        assert httpx2.get(f"{server.url}/health").status_code == 200


def test_a_crash_during_start_up_is_reported_at_once_with_the_log_tail(fake_vllm, model_dir, monkeypatch):
    monkeypatch.setenv("FAKE_VLLM_MODE", "crash")
    monkeypatch.setenv("FAKE_VLLM_DELAY_S", "0.3")
    server = VLLMServer(str(model_dir), executable=fake_vllm, startup_timeout_s=60)
    started = time.monotonic()
    with pytest.raises(VLLMStartError) as raised:
        server.start()
    assert time.monotonic() - started < 20  # noticed the exit; did not sit out the 60 s timeout
    message = str(raised.value)
    assert "exited with code 3 while starting" in message
    assert "Model architectures ['FancyVLM'] are not supported" in message  # the real reason, from the log
    assert isinstance(raised.value, BackendConfigError)  # the CLI shows it as a one-line config error


def test_a_server_that_never_gets_ready_times_out_and_is_killed(
    fake_vllm, model_dir, monkeypatch, record, wait_dead
):
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    monkeypatch.setenv("FAKE_VLLM_IGNORE_SIGTERM", "1")
    server = VLLMServer(str(model_dir), executable=fake_vllm, startup_timeout_s=1.5, shutdown_grace_s=0.3)
    with pytest.raises(VLLMStartError, match=r"did not become ready within 1\.5 s"):
        server.start()
    assert wait_dead(record()["pid"])


def test_stop_escalates_to_sigkill_and_takes_the_workers_with_it(
    fake_vllm, model_dir, monkeypatch, record, alive, wait_dead
):
    monkeypatch.setenv("FAKE_VLLM_IGNORE_SIGTERM", "1")
    monkeypatch.setenv("FAKE_VLLM_CHILD", "1")
    server = VLLMServer(str(model_dir), executable=fake_vllm, shutdown_grace_s=0.5).start()
    seen = record()
    assert alive(seen["pid"]) and alive(seen["child_pid"])
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started >= 0.5  # SIGTERM was ignored for the whole grace period
    assert server.returncode == -signal.SIGKILL
    assert wait_dead(seen["child_pid"])  # the worker died with its process group
    assert "ignoring SIGTERM" in server.log_path.read_text()
    server.stop()  # twice is harmless


def test_ctrl_c_while_waiting_leaves_no_server_behind(fake_vllm, model_dir, monkeypatch, record, wait_dead):
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    server = VLLMServer(str(model_dir), executable=fake_vllm, startup_timeout_s=60, shutdown_grace_s=2)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            server.start()
    finally:
        timer.cancel()
    assert wait_dead(record()["pid"])
    assert server.returncode is not None


@pytest.mark.parametrize("ending", ["sys.exit(0)", "raise RuntimeError('evaluation crashed')"])
def test_the_server_is_stopped_at_interpreter_exit(fake_vllm, model_dir, tmp_path, ending, wait_dead):
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import sys
        from expvid.models.vllm_manager import VLLMServer
        server = VLLMServer({str(model_dir)!r}, executable={fake_vllm!r}, shutdown_grace_s=2).start()
        open({str(pid_file)!r}, "w").write(str(server.process.pid))
        {ending}
        """
    )
    subprocess.run([sys.executable, "-c", script], timeout=60, capture_output=True)
    pid = int(pid_file.read_text())
    assert wait_dead(pid)


def test_a_missing_vllm_is_a_clear_config_error(model_dir):
    with pytest.raises(BackendConfigError, match="vLLM is not installed here"):
        VLLMServer(str(model_dir), executable="vllm-that-is-not-installed-anywhere")
