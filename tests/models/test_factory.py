"""Spec parsing and option validation: every mistake fails at creation with a message that says what."""

from __future__ import annotations

import sys

import pytest

from expvid.models import BackendConfigError, ModelBackend, create_backend
from expvid.models.anthropic_backend import AnthropicBackend
from expvid.models.baselines import FirstOptionBaseline, LongestOptionBaseline, RandomBaseline
from expvid.models.blind import BlindBackend
from expvid.models.gemini_backend import GeminiBackend
from expvid.models.openai_compat import OpenAICompatBackend


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak-secret")
    monkeypatch.setenv("GEMINI_API_KEY", "gk-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "ok-secret")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [
        ("openai:gpt-4o", OpenAICompatBackend, "openai:gpt-4o"),
        (
            "openai:Qwen/Qwen2.5-VL-7B-Instruct@http://gpu:8000/v1",
            OpenAICompatBackend,
            "openai:Qwen/Qwen2.5-VL-7B-Instruct",
        ),
        ("openai:qwen3:8b@http://127.0.0.1:11434/v1", OpenAICompatBackend, "openai:qwen3:8b"),
        ("anthropic:claude-sonnet-4", AnthropicBackend, "anthropic:claude-sonnet-4"),
        ("gemini:gemini-2.5-pro", GeminiBackend, "gemini:gemini-2.5-pro"),
        ("random", RandomBaseline, "random"),
        ("random:42", RandomBaseline, "random:42"),
        ("longest-option", LongestOptionBaseline, "longest-option"),
        ("first-option", FirstOptionBaseline, "first-option"),
        ("blind:gemini:gemini-2.5-pro", BlindBackend, "blind:gemini:gemini-2.5-pro"),
        ("blind:blind:random", BlindBackend, "blind:blind:random"),
    ],
)
def test_specs_build_the_right_backend(spec, cls, name):
    backend = create_backend(spec)
    assert isinstance(backend, cls)
    assert isinstance(backend, ModelBackend)
    assert backend.name == name


def test_base_url_from_spec_option_env_or_default(monkeypatch):
    assert create_backend("openai:m@http://a:1/v1").describe()["base_url"] == "http://a:1/v1"
    assert create_backend("openai:m", base_url="http://b:2/v1/").describe()["base_url"] == "http://b:2/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://c:3/v1")
    assert create_backend("openai:m").describe()["base_url"] == "http://c:3/v1"
    assert create_backend("openai:m", base_url="http://b:2/v1").describe()["base_url"] == "http://b:2/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert create_backend("openai:m").describe()["base_url"] == "https://api.openai.com/v1"


def test_conflicting_base_urls_are_refused():
    with pytest.raises(BackendConfigError, match="base URL"):
        create_backend("openai:m@http://a:1/v1", base_url="http://b:2/v1")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gpt-4o", "unknown model spec 'gpt-4o'"),
        ("openai", "model name is missing"),
        ("openai:", "model name is missing"),
        ("claude:opus", "unknown model spec"),
        ("random:abc", "seed must be an integer"),
        ("first-option:3", "unknown model spec"),
        ("blind:", "blind needs an inner spec"),
        ("blind:nonsense", "unknown model spec 'nonsense'"),
    ],
)
def test_bad_specs_fail_clearly(spec, message):
    with pytest.raises(BackendConfigError, match=message) as caught:
        create_backend(spec)
    if "unknown" in message:
        assert "openai:MODEL@http://host:port/v1" in str(caught.value)  # the error lists valid forms


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurency": 4}, "concurency"),
        ({"concurrency": 0}, "concurrency"),
        ({"timeout_s": -1}, "timeout_s"),
        ({"max_images": -2}, "max_images"),
        ({"thinking_style": "loud"}, "thinking_style"),
    ],
)
def test_bad_options_fail_clearly(options, message):
    with pytest.raises(BackendConfigError, match=message):
        create_backend("random", **options)


def test_cloud_backends_require_their_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(BackendConfigError, match="ANTHROPIC_API_KEY"):
        create_backend("anthropic:claude-sonnet-4")
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(BackendConfigError, match="GEMINI_API_KEY"):
        create_backend("gemini:gemini-2.5-pro")


def test_keys_never_appear_in_describe():
    for spec in ("openai:m", "anthropic:c", "gemini:g", "blind:anthropic:c"):
        described = repr(create_backend(spec).describe())
        for secret in ("ak-secret", "gk-secret", "ok-secret"):
            assert secret not in described


@pytest.mark.parametrize(
    ("spec", "modules", "extra"),
    [
        ("anthropic:c", ["anthropic"], "expvid[anthropic]"),
        ("gemini:g", ["google.genai", "google.genai.errors", "google.genai.types"], "expvid[gemini]"),
    ],
)
def test_missing_optional_sdk_gives_install_hint(monkeypatch, spec, modules, extra):
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)  # what an uninstalled package looks like to import
    with pytest.raises(BackendConfigError, match=extra.replace("[", r"\[").replace("]", r"\]")):
        create_backend(spec)


def test_importing_expvid_models_does_not_import_the_cloud_sdks():
    import subprocess

    code = (
        "import sys, expvid.models; "
        "print(any(m in sys.modules for m in ('anthropic', 'google.genai', 'uvicorn', 'starlette')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
