"""The OpenAI API option in the resume identity: compared by its effect, the model's default = not set."""

from __future__ import annotations

import pytest

from expvid.run.identity import _resolve_api, backend_identity


@pytest.mark.parametrize(
    ("spec", "api", "compared"),
    [
        ("openai:gpt-4o@http://h/v1", "chat", None),  # chat is gpt-4o's own API: the same run
        ("openai:gpt-4o@http://h/v1", "responses", "responses"),
        ("openai:gpt-5-pro", "responses", None),  # served only there: chosen anyway
        ("openai:gpt-5-pro", "chat", "chat"),
        ("blind:openai:o3-pro", "responses", None),
        ("openai:gpt-4o", None, None),
    ],
)
def test_api_is_compared_by_its_effect(spec: str, api: str | None, compared: str | None):
    backend = backend_identity({} if api is None else {"api": api})
    _resolve_api(backend, spec)
    assert backend["api"] == compared
    untouched = backend_identity({})
    _resolve_api(untouched, spec)
    assert untouched["api"] is None  # what a run made before the option recorded
