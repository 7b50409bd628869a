"""API keys come from an environment variable NAMED in the options, never from the options themselves.

So a key can never end up in a manifest, a describe() dict, a log line or a cache key: only the
variable's name is recorded.
"""

from __future__ import annotations

import os

from expvid.models.types import BackendConfigError


def read_api_key(api_key_env: str | None, *, default_env: str, required: bool, backend: str) -> str | None:
    """The key from `api_key_env` (or `default_env` when not given).

    A variable named explicitly must exist (a typo in its name should fail loudly). The default one may
    be missing when `required` is False: local OpenAI-compatible servers (vLLM, SGLang) need no key;
    OpenAI's own API (api.openai.com, Azure) requires it, as Anthropic's and Gemini's do.
    """
    name = api_key_env or default_env
    key = os.environ.get(name)
    if key:
        return key
    if api_key_env is not None or required:
        raise BackendConfigError(
            f"{backend}: environment variable {name} (holding the API key) is not set"
            + ("" if api_key_env is not None else "; set it or pass api_key_env=<variable name>")
        )
    return None
