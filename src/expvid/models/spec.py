"""One check of a model spec's form, for every command and library call that takes one.

`openai:MODEL@host:8000/v1` (a server without a scheme) is the typo that costs most: read naively,
"MODEL@host:8000/v1" is a model name and every request goes to the default OpenAI URL under that
name, with the user's OPENAI_API_KEY, each failing with a 404 - for an evaluated model, a judge
(`score --judge`) or a drafting model (`build --llm`) alike. The spec is checked here, before any
work, by `expvid eval --model/--judge`, `expvid score --judge`, `expvid build --llm/--vlm/--blind-llm`
and by `create_backend` itself, so a library caller meets the same refusal.

Only the form is checked (no credentials, no optional packages, no network): that is `create_backend`'s.
"""

from __future__ import annotations

import re

from expvid.models.types import BackendConfigError

_IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")

#: Spec kinds that name a served model, with the part after the colon required.
REMOTE_KINDS = ("openai", "anthropic", "gemini")
LOCAL_KINDS = ("hf", "vllm")
BASELINES = ("random", "longest-option", "first-option")
SPEC_FORMS = (
    "openai:MODEL, openai:MODEL@http://host:port/v1[,http://host2:port/v1...], anthropic:MODEL, "
    "gemini:MODEL, vllm:PATH, hf:PATH, random, random:SEED, longest-option, first-option, blind:<spec>, "
    "socratic:<captioner spec>+<answerer spec>"
)


def _server_problem(spec: str, rest: str) -> str | None:
    """Why the server part of `MODEL@SERVER` is unusable, or None (also None without a server)."""
    for marker in ("@http://", "@https://"):  # as `create_backend` splits it: the first '@' + scheme
        index = rest.find(marker)
        if index == 0:
            return f"model spec {spec!r}: the model name is missing before '@'"
        if index > 0:
            urls = [url.strip() for url in rest[index + 1 :].split(",") if url.strip()]
            bad = [url for url in urls if not url.startswith(("http://", "https://"))]
            if bad:
                return f"model spec {spec!r}: {bad[0]!r} is not an http(s) URL; write http://{bad[0]}"
            return None
    model, sep, server = rest.rpartition("@")
    if not sep:
        return None
    # 'MODEL@host:8000/v1', 'MODEL@localhost', 'MODEL@10.0.0.2': a server without a scheme; an
    # '@' before a plain word stays part of the name (Vertex: 'claude-3-5-sonnet-v2@20241022').
    if ":" in server or "/" in server or server.startswith("localhost") or _IPV4.match(server):
        return (
            f"model spec {spec!r} names the server {server!r} without a scheme; write {model}@http://{server}"
        )
    return None


def spec_problem(spec: str) -> str | None:
    """Why `spec` cannot name a model backend, or None when its form is right."""
    text = spec.strip()
    if not text:
        return "the model spec is empty; expected one of: " + SPEC_FORMS
    kind, sep, rest = text.partition(":")
    if kind == "blind":
        if not rest:
            return f"model spec {text!r}: blind needs an inner spec, e.g. blind:openai:MODEL"
        return spec_problem(rest)
    if kind == "socratic":  # two specs joined by '+': each is checked as a spec of its own
        from expvid.models.socratic import split_socratic

        try:
            captioner, answerer = split_socratic(rest)
        except BackendConfigError as error:
            return str(error)
        return spec_problem(captioner) or spec_problem(answerer)
    if kind in REMOTE_KINDS and (not rest or rest.startswith("@")):
        return f"model spec {text!r}: the model name is missing ({kind}:MODEL)"
    if kind in LOCAL_KINDS:
        return None if rest else f"model spec {text!r}: the checkpoint path is missing ({kind}:PATH)"
    if kind == "random":
        if sep and not rest.strip().lstrip("-").isdigit():
            return f"model spec {text!r}: the random seed must be an integer"
        return None
    if kind in BASELINES and not sep:
        return None
    if sep and rest:
        # A served model, whatever its API family (`create_backend` knows the families): its
        # server, when one is named, must be a URL.
        return _server_problem(text, rest)
    return f"unknown model spec {text!r}; expected one of: {SPEC_FORMS}"


def check_spec(spec: str) -> None:
    """Raise `BackendConfigError` naming the problem when `spec`'s form is wrong."""
    problem = spec_problem(spec)
    if problem is not None:
        raise BackendConfigError(problem)


def split_spec(spec: str) -> tuple[str, str, str | None]:
    """(kind, model or path, server URL or None) of a spec, `blind:` unwrapped:
    'openai:m@http://h/v1' -> ('openai', 'm', 'http://h/v1'). Several URLs stay one string."""
    text = spec.strip()
    while text.startswith("blind:"):
        text = text.removeprefix("blind:")
    kind, _, rest = text.partition(":")
    for marker in ("@http://", "@https://"):
        index = rest.find(marker)
        if index > 0:
            return kind, rest[:index], rest[index + 1 :]
    return kind, rest, None


def model_identity(spec: str | None) -> str | None:
    """A model spec as stage fingerprints name it: without its server ("openai:m@http://h/v1" ->
    "openai:m"; a name's own "@", as in Vertex's "claude-3-5-sonnet@20240620", stays). It equals the
    backend's name for every drafting backend, and the dry run computes it without opening one."""
    if spec is None:
        return None
    for marker in ("@http://", "@https://"):
        index = spec.find(marker)
        if index > 0:
            return spec[:index]
    return spec


def model_id(backend_name: str) -> str:
    """The model as its provider names it ("openai:gpt-4o-2024-08-06" -> "gpt-4o-2024-08-06")."""
    kind, sep, rest = backend_name.partition(":")
    return rest if sep and kind in ("openai", "anthropic", "gemini", "vllm", "hf") else backend_name
