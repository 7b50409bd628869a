"""`create_backend(spec, **options)`: the one place where a model spec string becomes a backend.

Specs:
    openai:MODEL                    base URL from option base_url, env OPENAI_BASE_URL, or api.openai.com
    openai:MODEL@http://host:port/v1
    openai:MODEL@http://a:8000/v1,http://b:8000/v1   several servers of one model (or option base_urls)
                                    (option api: "chat" or "responses"; default: responses for the
                                    models OpenAI serves only there, gpt-5-pro, o3-pro, ...)
    vllm:PATH                       starts `vllm serve PATH` (tensor_parallel_size, port, vllm_args, ...)
    hf:PATH                         runs the checkpoint here with transformers (needs the 'hf' extra)
    anthropic:MODEL                 needs the 'anthropic' extra
    gemini:MODEL                    needs the 'gemini' extra
    random | random:SEED            offline baselines, no network
    longest-option | first-option
    blind:<any spec>                the inner backend with images removed
    socratic:CAPTIONER+ANSWERER     frames captioned by one model, answered from the captions by another

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
from expvid.models.param_rules import is_openai_host
from expvid.models.spec import SPEC_FORMS, check_spec
from expvid.models.types import BackendConfigError, ModelBackend

__all__ = ["SPEC_FORMS", "create_backend"]


def create_backend(spec: str, **options: Any) -> ModelBackend:
    """Build the backend named by `spec`; `options` are the fields of `BackendOptions`."""
    check_spec(spec)  # the form first, the same check every command makes before any work
    parsed = parse_options(options)
    spec = spec.strip()
    kind, sep, rest = spec.partition(":")
    if parsed.api is not None and kind not in ("openai", "blind"):
        raise BackendConfigError(
            f"model spec {spec!r}: option api={parsed.api!r} applies to openai: models only"
        )
    if kind == "blind":
        if not rest:
            raise BackendConfigError(
                f"model spec {spec!r}: blind needs an inner spec, e.g. blind:openai:MODEL"
            )
        return BlindBackend(create_backend(rest, **options))
    if kind == "socratic":
        from expvid.models.socratic import SocraticBackend, split_socratic

        captioner, answerer = split_socratic(rest)
        return SocraticBackend(create_backend(captioner, **options), create_backend(answerer, **options))
    if kind in ("openai", "anthropic", "gemini"):
        if not rest:
            raise BackendConfigError(f"model spec {spec!r}: the model name is missing ({kind}:MODEL)")
        return _remote(kind, rest, spec, parsed)
    if kind in ("hf", "vllm"):
        if not rest:
            raise BackendConfigError(f"model spec {spec!r}: the checkpoint path is missing ({kind}:PATH)")
        return _local(kind, rest, parsed)
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


def _local(kind: str, path: str, options: BackendOptions) -> ModelBackend:
    if kind == "hf":
        from expvid.models.hf.backend import HFBackend

        return HFBackend(path, options)
    from expvid.models.vllm_backend import ManagedVLLMBackend

    return ManagedVLLMBackend(path, options)


def _remote(kind: str, rest: str, spec: str, options: BackendOptions) -> ModelBackend:
    model, url_in_spec = _split_url(rest)
    if kind == "openai":
        urls = _openai_urls(spec, url_in_spec, options)
        if len(urls) > 1:
            from expvid.models.multi_endpoint import MultiEndpointBackend
            from expvid.models.openai_compat import DEFAULT_KEY_ENV

            key = read_api_key(
                options.api_key_env,
                default_env=DEFAULT_KEY_ENV,
                required=any(is_openai_host(url) for url in urls),
                backend=spec,
            )
            if _api(model, options) == "responses":
                from expvid.models.responses_backend import MultiEndpointResponsesBackend

                return MultiEndpointResponsesBackend(model, base_urls=urls, api_key=key, options=options)
            return MultiEndpointBackend(model, base_urls=urls, api_key=key, options=options)
        url_in_spec = urls[0] if urls else None
    if url_in_spec is not None and options.base_url is not None and url_in_spec != options.base_url:
        raise BackendConfigError(
            f"model spec {spec!r} names base URL {url_in_spec} but option base_url is {options.base_url}"
        )
    base_url = url_in_spec or options.base_url
    if kind == "openai":
        from expvid.models.openai_compat import DEFAULT_BASE_URL, DEFAULT_KEY_ENV, OpenAICompatBackend

        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        # OpenAI's own API (and Azure's) refuses a request without a key: say so before any work, as
        # for anthropic: and gemini:. A local server (vLLM, SGLang, a proxy) may need none.
        key = read_api_key(
            options.api_key_env, default_env=DEFAULT_KEY_ENV, required=is_openai_host(base_url), backend=spec
        )
        if _api(model, options) == "responses":
            from expvid.models.responses_backend import OpenAIResponsesBackend

            return OpenAIResponsesBackend(model, base_url=base_url, api_key=key, options=options)
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


def _api(model: str, options: BackendOptions) -> str:
    """Which OpenAI API serves `model`: the option's, else the Responses API for the models served
    only there (gpt-5-pro, o3-pro, ...), else chat completions."""
    from expvid.models.responses_backend import resolved_api

    return resolved_api(model, options.api)


def _openai_urls(spec: str, url_in_spec: str | None, options: BackendOptions) -> list[str]:
    """The servers named by the spec ('@URL1,URL2') or by option base_urls; they must not disagree."""
    from_spec = [u.strip() for u in url_in_spec.split(",") if u.strip()] if url_in_spec else []
    from_option = [u.strip() for u in options.base_urls or [] if u.strip()]
    if from_spec and from_option and _normalized(from_spec) != _normalized(from_option):
        raise BackendConfigError(
            f"model spec {spec!r} names base URLs {from_spec} but option base_urls is {from_option}"
        )
    urls = from_spec or from_option
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise BackendConfigError(f"model spec {spec!r}: {url!r} is not an http(s) URL")
    if len(set(_normalized(urls))) != len(urls):
        raise BackendConfigError(f"model spec {spec!r}: a base URL is listed twice: {urls}")
    if len(urls) > 1 and options.base_url is not None:
        raise BackendConfigError(f"model spec {spec!r}: give either base_url or several base URLs, not both")
    return urls


def _normalized(urls: list[str]) -> list[str]:
    return [url.rstrip("/") for url in urls]


def _split_url(rest: str) -> tuple[str, str | None]:
    """'MODEL@http://host/v1' -> ('MODEL', 'http://host/v1'); an '@' not followed by a URL stays in MODEL."""
    for marker in ("@http://", "@https://"):
        index = rest.find(marker)
        if index > 0:
            return rest[:index], rest[index + 1 :]
    return rest, None
