"""A stand-in for the `vllm` executable: `fake_vllm.py serve MODEL --port P ...` behaves like `vllm serve`.

It parses the arguments vLLM would, then (after FAKE_VLLM_DELAY_S, like a model loading) serves the
OpenAI API with `expvid.fakes.models.server.LoopbackServer` plus vLLM's `GET /health`, answering with an
echo of what it received. Environment switches make it misbehave the ways real servers do:

    FAKE_VLLM_MODE=serve      (default) start after the delay
    FAKE_VLLM_MODE=crash      print a vLLM-like error to stderr and exit 3 after the delay
    FAKE_VLLM_MODE=hang       never become ready
    FAKE_VLLM_EXIT_AFTER_S=N  serve, then die with exit code 1 after N seconds
    FAKE_VLLM_IGNORE_SIGTERM=1  keep running after SIGTERM (only SIGKILL stops it)
    FAKE_VLLM_CHILD=1         start a worker child process (as tensor-parallel workers are)
    FAKE_VLLM_RECORD=PATH     write argv, pid, child pid and whether VLLM_API_KEY was set, as JSON
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(prog="vllm")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve")
    serve.add_argument("model")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--served-model-name", default=None)
    serve.add_argument("--tensor-parallel-size", type=int, default=1)
    serve.add_argument("--limit-mm-per-prompt", default=None)
    serve.add_argument("--max-model-len", type=int, default=None)
    serve.add_argument("--media-io-kwargs", default=None)
    serve.add_argument("--generation-config", default="auto")
    args = parser.parse_args()

    mode = os.environ.get("FAKE_VLLM_MODE", "serve")
    child = None
    if os.environ.get("FAKE_VLLM_CHILD") == "1":
        child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
    record = os.environ.get("FAKE_VLLM_RECORD")
    if record:
        with open(record, "w") as file:
            json.dump(
                {
                    "argv": sys.argv[1:],
                    "pid": os.getpid(),
                    "child_pid": None if child is None else child.pid,
                    "api_key_set": bool(os.environ.get("VLLM_API_KEY")),
                },
                file,
            )
    if os.environ.get("FAKE_VLLM_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, lambda *_: print("INFO: ignoring SIGTERM", flush=True))
    else:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    print(
        f"INFO: loading model {args.model} with tensor_parallel_size={args.tensor_parallel_size}", flush=True
    )
    time.sleep(float(os.environ.get("FAKE_VLLM_DELAY_S", "0.2")))
    if mode == "crash":
        print(
            "ValueError: Model architectures ['FancyVLM'] are not supported for now.",
            file=sys.stderr,
            flush=True,
        )
        return 3
    if mode == "hang":
        while True:
            time.sleep(0.1)

    from starlette.responses import Response

    from expvid.fakes.models.server import LoopbackServer, echo

    class FakeVLLM(LoopbackServer):
        def _app(self):  # vLLM's readiness route on top of the OpenAI API
            app = super()._app()
            app.add_route("/health", lambda request: Response(status_code=200), methods=["GET"])
            return app

    name = args.served_model_name or args.model
    api_key = os.environ.get("VLLM_API_KEY") or None  # like vLLM: required on requests when set
    server = FakeVLLM(echo, api_key=api_key, models=(name,), host=args.host, port=args.port).start()
    print(f"INFO: Uvicorn running on http://{args.host}:{server.port}", flush=True)
    exit_after = os.environ.get("FAKE_VLLM_EXIT_AFTER_S")
    deadline = time.monotonic() + float(exit_after) if exit_after else None
    while deadline is None or time.monotonic() < deadline:
        time.sleep(0.05)
    print("ERROR: engine core died unexpectedly", file=sys.stderr, flush=True)
    os._exit(1)


if __name__ == "__main__":
    sys.exit(main())
