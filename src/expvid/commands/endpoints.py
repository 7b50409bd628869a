"""The endpoint options every command that talks to a model server takes, parsed in one place.

`expvid eval` and `expvid build` both reach models through `expvid.models.create_backend`; a model
served on several nodes (vLLM or SGLang replicas of DeepSeek-R1, say) is one backend over all of
them (`expvid.models.multi_endpoint`: spread by load, failover, benching of a failing node). These
options turn the command line into that backend's settings, identically for both commands:

- `--base-url URL` (repeatable): one server, or several with failover (`base_urls`);
- `--api-key-env NAME`, `--timeout S`, `--max-retries N`;
- `--backend-option KEY=VALUE` (repeatable): any other `BackendOptions` field (VALUE read as JSON when
  it parses), e.g. `endpoint_concurrency=8`, `endpoint_cooldown_s=30`.

Only typer and the standard library are imported at the top: command help must stay fast
(tests/cli/test_startup.py).
"""

from __future__ import annotations

from typing import Annotated

import typer

BaseUrlOption = Annotated[
    list[str] | None,
    typer.Option(
        "--base-url",
        help="OpenAI-compatible server URL; repeat to spread requests over several, with failover.",
    ),
]
ApiKeyEnvOption = Annotated[str | None, typer.Option("--api-key-env", help="Env var holding the API key.")]
TimeoutOption = Annotated[float | None, typer.Option("--timeout", help="Seconds per request.")]
MaxRetriesOption = Annotated[
    int | None, typer.Option("--max-retries", min=0, help="HTTP retries per request (failover included).")
]
BackendOptionOption = Annotated[
    list[str] | None,
    typer.Option(
        "--backend-option",
        help="Backend setting KEY=VALUE (VALUE read as JSON when it parses), e.g. endpoint_concurrency=8.",
    ),
]


def endpoint_options(
    base_url: list[str] | None,
    api_key_env: str | None,
    timeout: float | None,
    max_retries: int | None,
    backend_option: list[str] | None,
) -> dict[str, object]:
    """The backend settings these options ask for (`typer.BadParameter` on a bad value: exit 2); the
    assembly is `expvid.run.config.endpoint_options`, which `expvid eval` uses too."""
    from expvid.commands.errors import require_http_urls
    from expvid.run.config import endpoint_options as assemble

    require_http_urls("--base-url", *(base_url or []))
    try:
        return assemble(list(base_url or []), api_key_env, timeout, max_retries, list(backend_option or []))
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--backend-option") from None


def endpoint_options_of(values: dict[str, object]) -> dict[str, object]:
    """`endpoint_options` from a command's parameters by name (the build recipes get `expvid build`'s
    parameters as one dict), so every recipe takes the same endpoint options as `expvid eval`."""
    base_url, backend_option = values.get("base_url"), values.get("backend_option")
    api_key_env, timeout, max_retries = (
        values.get("api_key_env"),
        values.get("timeout"),
        values.get("max_retries"),
    )
    return endpoint_options(
        [str(url) for url in base_url] if isinstance(base_url, list) else None,
        api_key_env if isinstance(api_key_env, str) else None,
        float(timeout) if isinstance(timeout, int | float) else None,
        max_retries if isinstance(max_retries, int) else None,
        [str(pair) for pair in backend_option] if isinstance(backend_option, list) else None,
    )
