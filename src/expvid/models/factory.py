"""`create_backend(spec, **options)`: the one place where a model spec string becomes a backend.

Specs:
    openai:MODEL                    base URL from option base_url, env OPENAI_BASE_URL, or api.openai.com
    openai:MODEL@http://host:port/v1
    anthropic:MODEL                 needs the 'anthropic' extra
    gemini:MODEL                    needs the 'gemini' extra
    random | random:SEED            offline baselines, no network
    longest-option | first-option
    blind:<any spec>                the inner backend with images removed

Everything is validated here (spec, options, API key variable, optional packages), so a typo fails
before the first item is run.
"""

from __future__ import annotations

import os
from typing import Any

from expvid.models.baselines import FirstOptionBaseline, LongestOptionBaseline, RandomBaseline
from expvid.models.blind import BlindBackend
from expvid.models.credentials import read_api_key
from expvid.models.options import BackendOptions, parse_options
from expvid.models.types import BackendConfigError, ModelBackend

SPEC_FORMS = (
    "openai:MODEL, openai:MODEL@http://host:port/v1, anthropic:MODEL, gemini:MODEL, "
    "random, random:SEED, longest-option, first-option, blind:<spec>"
)


def create_backend(spec: str, **options: Any) -> ModelBackend:
    """Build the backend named by `spec`; `options` are the fields of `BackendOptions`."""
    parsed = parse_options(options)
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    if kind == "blind":
        if not rest:
            raise BackendConfigError(
                f"model spec {spec!r}: blind needs an inner spec, e.g. blind:openai:MODEL"
            )
        return BlindBackend(create_backend(rest, **options))
    if kind in ("openai", "anthropic", "gemini"):
        if not rest:
            raise BackendConfigError(f"model spec {spec!r}: the model name is missing ({kind}:MODEL)")
        return _remote(kind, rest, spec, parsed)
    if kind == "random":
        if not sep:
            return RandomBaseline(max_images=parsed.max_images)
        try:
            seed = int(rest)
        except ValueError:
            raise BackendConfigError(f"model spec {spec!r}: the random seed must be an integer") from None
        return RandomBaseline(seed, explicit_seed=True, max_images=parsed.max_images)
    if kind in ("longest-option", "first-option") and not sep:
        cls = LongestOptionBaseline if kind == "longest-option" else FirstOptionBaseline
        return cls(max_images=parsed.max_images)
    raise BackendConfigError(f"unknown model spec {spec!r}; expected one of: {SPEC_FORMS}")


def _remote(kind: str, rest: str, spec: str, options: BackendOptions) -> ModelBackend:
    model, url_in_spec = _split_url(rest)
    if url_in_spec is not None and options.base_url is not None and url_in_spec != options.base_url:
        raise BackendConfigError(
            f"model spec {spec!r} names base URL {url_in_spec} but option base_url is {options.base_url}"
        )
    base_url = url_in_spec or options.base_url
    if kind == "openai":
        from expvid.models.openai_compat import DEFAULT_BASE_URL, DEFAULT_KEY_ENV, OpenAICompatBackend

        key = read_api_key(options.api_key_env, default_env=DEFAULT_KEY_ENV, required=False, backend=spec)
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        return OpenAICompatBackend(model, base_url=base_url, api_key=key, options=options)
    if kind == "anthropic":
        from expvid.models.anthropic_backend import DEFAULT_KEY_ENV as ANTHROPIC_KEY_ENV
        from expvid.models.anthropic_backend import AnthropicBackend

        key = read_api_key(options.api_key_env, default_env=ANTHROPIC_KEY_ENV, required=True, backend=spec)
        assert key is not None
        return AnthropicBackend(model, base_url=base_url, api_key=key, options=options)
    from expvid.models.gemini_backend import DEFAULT_KEY_ENV as GEMINI_KEY_ENV
    from expvid.models.gemini_backend import GeminiBackend

    key = read_api_key(options.api_key_env, default_env=GEMINI_KEY_ENV, required=True, backend=spec)
    assert key is not None
    return GeminiBackend(model, base_url=base_url, api_key=key, options=options)


def _split_url(rest: str) -> tuple[str, str | None]:
    """'MODEL@http://host/v1' -> ('MODEL', 'http://host/v1'); an '@' not followed by a URL stays in MODEL."""
    for marker in ("@http://", "@https://"):
        index = rest.find(marker)
        if index > 0:
            return rest[:index], rest[index + 1 :]
    return rest, None
