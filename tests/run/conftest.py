"""Fixtures for the evaluation runner: a loopback model server and a shared frame cache."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply

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
def _session_frames(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("expvid_frames")


@pytest.fixture
def frame_cache_dir(tmp_path: Path, _session_frames: Path) -> Path:
    """A cache directory whose frame cache is shared by all runner tests (each clip is decoded once
    per session) and whose response cache is this test's own: responses are keyed by model and
    request, not by server URL, so a shared one would answer this test's requests from another's."""
    cache = tmp_path / "expvid_cache"
    cache.mkdir()
    (cache / "frames").symlink_to(_session_frames, target_is_directory=True)
    return cache
