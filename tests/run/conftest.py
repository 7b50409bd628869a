"""Fixtures for the evaluation runner: a loopback model server and a shared frame cache."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from expvid.models.loopback import LoopbackServer, RecordedRequest, Reply

_STEP_LINE = re.compile(r"^\s*(\d+)\.", re.MULTILINE)


def answering(request: RecordedRequest) -> Reply:
    """A stand-in model that answers in the shape each ExpVid prompt asks for (never correct on purpose)."""
    prompt = request.texts[-1] if request.texts else ""
    if "fill-in-the-blank" in prompt:
        blanks = len(re.findall(r"_{2,}", prompt))
        return Reply.ok("\\boxed{" + ", ".join(["water"] * blanks) + "}")
    if "list of numbers" in prompt:
        return Reply.ok("The video shows steps \\boxed{1, 2, 3}")
    if "single number" in prompt:
        return Reply.ok("\\boxed{2}")
    return Reply.ok("I think the answer is \\boxed{A}")


@pytest.fixture
def model_server() -> Iterator[LoopbackServer]:
    with LoopbackServer(answering) as server:
        yield server


@pytest.fixture(scope="session")
def frame_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for all runner tests, so each clip is decoded once per session."""
    return tmp_path_factory.mktemp("expvid_cache")
