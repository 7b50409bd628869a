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


def test_socratic_pipelines_that_differ_only_in_their_answerer_are_different_configurations() -> None:
    """The server of each model is operational; which models make up the pipeline is not."""
    from expvid.run.identity import model_name

    base = "socratic:openai:llava-1.5@http://gpu1:8000/v1+openai:"
    llama = model_name(base + "llama-3.1-70b@http://gpu2:8001/v1")
    qwen = model_name(base + "qwen2.5-72b@http://gpu2:8001/v1")
    assert llama == "socratic:openai:llava-1.5+openai:llama-3.1-70b"
    assert llama != qwen
    moved = model_name("socratic:openai:llava-1.5@http://gpu9:9000/v1+openai:llama-3.1-70b@https://other/v1")
    assert moved == llama  # new endpoints, same pipeline
    assert model_name("openai:gpt-4o@http://h:8000/v1") == "openai:gpt-4o"
