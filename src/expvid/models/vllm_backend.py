"""`vllm:PATH`: start `vllm serve PATH`, then talk to it with the OpenAI-compatible backend.

The server starts when the backend is built (so a checkpoint vLLM cannot load fails before the
first item, with the log's last lines in the error) and stops in `aclose()`. Requests go through
`OpenAICompatBackend` unchanged: the same retries, adaptive concurrency, thinking switch and cache.
Two things differ from pointing `openai:` at a server yourself:

- the cache key names the checkpoint and the server arguments, not the (random) port, so a second
  run of the same model hits the cache;
- when the server process has died, requests fail at once with its exit code and log tail instead
  of retrying against a closed port for minutes;
- a video run (`--input-mode video`) starts the server to take one video of every frame sent
  (`--limit-mm-per-prompt` with a video, `--media-io-kwargs '{"video": {"num_frames": -1}}'`: vLLM
  otherwise keeps only the first 32 frames of a frame sequence);
- the checkpoint's generation_config.json, which vLLM applies by default (`--generation-config
  auto`), is recorded in `describe()` (top_k, top_p, repetition_penalty).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from expvid.models.cache import cache_key
from expvid.models.credentials import read_api_key
from expvid.models.hf.checkpoint import checkpoint_generation_config
from expvid.models.openai_compat import OpenAICompatBackend
from expvid.models.options import BackendOptions
from expvid.models.stats import BackendStats
from expvid.models.types import BackendConfigError, BackendError, GenerateRequest, GenerateResponse
from expvid.models.vllm_manager import VLLMServer
from expvid.schema import ErrorKind


class _ServedModel(OpenAICompatBackend):
    """The OpenAI-compatible client of one managed server, with a port-independent cache key."""

    def __init__(
        self,
        served_name: str,
        *,
        base_url: str,
        api_key: str | None,
        options: BackendOptions,
        identity: dict[str, Any],
    ) -> None:
        super().__init__(served_name, base_url=base_url, api_key=api_key, options=options)
        self._identity = identity

    def request_hash(self, request: GenerateRequest) -> str:
        extra = {**self._wire_options(), "server": self._identity}
        if request.input_mode != "images":
            extra["input_mode"] = request.input_mode
        return cache_key(
            request, backend="vllm", model=str(self._identity["model"]), base_url=None, extra=extra
        )


def _model_argument(path: str) -> str:
    """A local folder (made absolute, so the server's working directory does not matter) or a hub id."""
    local = Path(path).expanduser()
    if local.exists():
        return str(local.resolve())
    if path.startswith((".", "/", "~")):
        raise BackendConfigError(f"vllm:{path}: no such checkpoint folder")
    return path


def _limit_args(options: BackendOptions) -> list[str]:
    """Let the server take what the run sends: as many images per prompt as it may send, or one video
    of every frame (vLLM's limits are per modality; its frame sequences keep 32 frames by default)."""
    args: list[str] = []
    video = options.input_mode == "video"
    if not any(a.startswith("--limit-mm-per-prompt") for a in options.vllm_args):
        limits: dict[str, int] = {}
        if options.max_images is not None:
            limits["image"] = options.max_images
        if video:
            limits["video"] = 1
        if limits:
            args += ["--limit-mm-per-prompt", json.dumps(limits)]
    if video and not any(a.startswith("--media-io-kwargs") for a in options.vllm_args):
        args += ["--media-io-kwargs", json.dumps({"video": {"num_frames": -1}})]
    return args


def _generation_config(model: str, vllm_args: list[str]) -> dict[str, Any]:
    """What vLLM applies from the checkpoint's generation_config.json (unless told not to)."""
    for index, arg in enumerate(vllm_args):
        value = arg.partition("=")[2] if arg.startswith("--generation-config=") else None
        if arg == "--generation-config" and index + 1 < len(vllm_args):
            value = vllm_args[index + 1]
        if value == "vllm":
            return {"source": "vLLM defaults (--generation-config vllm)"}
    folder = Path(model)
    if not folder.is_dir():
        return {"source": f"{model}: generation_config.json of the hub checkpoint (not read here)"}
    return {**checkpoint_generation_config(folder), "source": str(folder / "generation_config.json")}


class ManagedVLLMBackend:
    kind = "vllm"

    def __init__(self, path: str, options: BackendOptions) -> None:
        self.name = f"vllm:{path}"
        self.options = options
        model = _model_argument(path)
        # A key only when one is named: the server then requires it (useful with host="0.0.0.0").
        key = None
        if options.api_key_env is not None:
            key = read_api_key(
                options.api_key_env, default_env=options.api_key_env, required=True, backend=self.name
            )
        extra_args = [*options.vllm_args, *_limit_args(options)]
        self.server = VLLMServer.from_options(model, options, extra_args=extra_args, api_key=key)
        self.server.start()
        identity = {"model": model, "args": extra_args}
        self.generation_config = _generation_config(model, extra_args)
        client_options = options.model_copy(update={"base_url": None, "base_urls": None})
        self.client = _ServedModel(
            self.server.served_model_name,
            base_url=self.server.base_url,
            api_key=key,
            options=client_options,
            identity=identity,
        )

    def _server_died(self) -> BackendError:
        return BackendError(
            f"{self.name}: the vllm server exited with code {self.server.returncode}; "
            f"last lines of {self.server.log_path}:\n{self.server.log_tail(20)}",
            kind=ErrorKind.OTHER,
        )

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        if not self.server.alive():
            raise self._server_died()
        try:
            return await self.client.generate(request)
        except BackendError as error:
            if not self.server.alive():
                raise self._server_died() from error
            raise

    def describe(self) -> dict[str, Any]:
        server = self.server
        return {
            "name": self.name,
            "kind": self.kind,
            "model": server.model,
            "served_model_name": server.served_model_name,
            "command": server.command,
            "tensor_parallel_size": server.tensor_parallel_size,
            "log_path": None if server.log_path is None else str(server.log_path),
            "startup_s": None if server.startup_s is None else round(server.startup_s, 1),
            "generation_config": self.generation_config,
            "client": self.client.describe(),
        }

    def input_modes(self) -> tuple[str, ...]:
        return ("images", "video")

    def stats(self) -> BackendStats:
        return self.client.stats()

    async def aclose(self) -> None:
        try:
            await self.client.aclose()
        finally:
            await asyncio.to_thread(self.server.stop)
