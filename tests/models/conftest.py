"""Fixtures for the model backends: one real loopback server per session, coded JPEG frames.

Helpers are handed out as fixtures (not imported from here) because several test areas have a
conftest.py and none of them is a package.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from PIL import Image

from expvid.fakes.models.server import LoopbackServer
from expvid.media.synth import read_frame_code, scene_frame
from expvid.models import GenerateRequest, ImagePart, Message, TextPart

MakeRequest = Callable[..., GenerateRequest]


def _jpeg(array: np.ndarray, quality: int = 85) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def _frame_code(data: bytes) -> int:
    with Image.open(io.BytesIO(data)) as image:
        return read_frame_code(np.asarray(image.convert("RGB")))


def _make_request(
    frames: Sequence[bytes] = (), question: str = "Which tool is used?", **fields: Any
) -> GenerateRequest:
    content: list[ImagePart | TextPart] = [ImagePart(data=frame) for frame in frames]
    content.append(TextPart(text=question))
    messages = [
        Message(role="system", content=[TextPart(text="You are a careful lab assistant.")]),
        Message(role="user", content=list(content)),
    ]
    return GenerateRequest(messages=messages, **fields)


@pytest.fixture
def fast() -> dict[str, float]:
    """Backend options for quick retries: the same policy, on a millisecond time scale."""
    return {"backoff_base_s": 0.005, "backoff_max_s": 0.05}


@pytest.fixture
def call() -> Callable[[Any, GenerateRequest], Any]:
    """call(backend, request): one generate() in its own event loop, closing the backend's
    connections before the loop ends (as the runner does), so no socket outlives its loop."""

    def _call(backend: Any, request: GenerateRequest) -> Any:
        async def once() -> Any:
            try:
                return await backend.generate(request)
            finally:
                await backend.aclose()

        return asyncio.run(once())

    return _call


@pytest.fixture
def make_request() -> MakeRequest:
    """make_request(frames=(), question=..., **GenerateRequest fields): system + user(images..., question)."""
    return _make_request


@pytest.fixture
def frame_code() -> Callable[[bytes], int]:
    """Read back the number drawn into a coded frame: proves which frame arrived where."""
    return _frame_code


@pytest.fixture(scope="session")
def coded_frames() -> list[bytes]:
    """Eight 224x224 JPEG frames whose top band encodes 0..7."""
    return [_jpeg(scene_frame(i, 224, 224)) for i in range(8)]


@pytest.fixture(scope="session")
def loopback_session() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def server(loopback_session: LoopbackServer) -> Iterator[LoopbackServer]:
    """The session's server, reset to answer "OK" with no key check."""
    loopback_session.reset("OK")
    loopback_session.api_key = None
    yield loopback_session
    loopback_session.api_key = None
