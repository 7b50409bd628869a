"""Several real loopback servers standing in for vLLM nodes, with switchable misbehaviour."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from expvid.fakes.models.server import LoopbackServer, RecordedRequest, Reply
from expvid.models import GenerateRequest, Message, TextPart


class Node:
    """A responder that answers each question with its own text, and can be told to start failing."""

    def __init__(self, name: str, delay_s: float = 0.01) -> None:
        self.name = name
        self.delay_s = delay_s
        self.failure: Reply | None = None
        self.fail_after: int | None = None
        self.recover_after_failures: int | None = None
        self._lock = threading.Lock()
        self.served = 0
        self.failed = 0

    def __call__(self, request: RecordedRequest) -> Reply:
        with self._lock:
            failing = (
                self.failure is not None and self.fail_after is not None and self.served >= self.fail_after
            )
            if (
                failing
                and self.recover_after_failures is not None
                and self.failed >= self.recover_after_failures
            ):
                failing = False
            if failing:
                self.failed += 1
            else:
                self.served += 1
        if failing:
            assert self.failure is not None
            return self.failure
        return Reply.ok(f"{self.name} answers: {request.texts[-1]}", delay_s=self.delay_s)


@pytest.fixture
def cluster() -> Iterator[Callable[..., list[tuple[LoopbackServer, Node]]]]:
    """cluster(n) -> n started servers with their nodes; all stopped after the test."""
    started: list[LoopbackServer] = []

    def make(n: int = 3, delay_s: float = 0.01) -> list[tuple[LoopbackServer, Node]]:
        pairs = []
        for index in range(n):
            node = Node("abcdefgh"[index], delay_s)
            server = LoopbackServer(node).start()
            started.append(server)
            pairs.append((server, node))
        return pairs

    yield make
    for server in started:
        server.stop()


def question(index: int, **fields: Any) -> GenerateRequest:
    return GenerateRequest(
        messages=[Message(role="user", content=[TextPart(text=f"question {index}")])],
        metadata={"item_id": f"item-{index}"},
        **fields,
    )


@pytest.fixture
def ask() -> Callable[..., GenerateRequest]:
    return question


@pytest.fixture
def fast() -> dict[str, float]:
    return {"backoff_base_s": 0.005, "backoff_max_s": 0.05}
