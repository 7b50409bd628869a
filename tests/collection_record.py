"""Which test files this pytest session collected (before `-k`/`-m` deselection): recorded by the root
conftest, read by tests/test_every_test_file_is_collected.py. A module of its own because every test
folder has a `conftest.py` of its own, so `from conftest import ...` names whichever was imported last."""

from __future__ import annotations

import pytest

COLLECTED_FILES = pytest.StashKey[set[str]]()


def record(item: pytest.Item) -> None:
    item.config.stash.setdefault(COLLECTED_FILES, set()).add(item.nodeid.split("::", 1)[0])
