"""Fixtures for the ProMQA recipe: the real release files and an excerpt of CaptainCook4D."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from expvid.construction.recipes.promqa.graph import RecipeGraph

DATA = Path(__file__).resolve().parent / "data"
#: The published ProMQA files (examples.json, graphs.json); CI has them under ../shared.
RELEASE_DIR = Path(
    os.environ.get("EXPVID_PROMQA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data" / "promqa")
)


@pytest.fixture(scope="session")
def release_dir() -> Path:
    if not (RELEASE_DIR / "examples.json").is_file():
        pytest.skip(f"the ProMQA release files are not at {RELEASE_DIR}")
    return RELEASE_DIR


@pytest.fixture(scope="session")
def released(release_dir: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((release_dir / "examples.json").read_text(encoding="utf-8"))
    return data


@pytest.fixture(scope="session")
def released_recipes(release_dir: Path) -> dict[str, RecipeGraph]:
    graphs = json.loads((release_dir / "graphs.json").read_text(encoding="utf-8"))
    return {g["name"]: RecipeGraph.from_release(k, g["name"], g) for k, g in graphs.items()}


@pytest.fixture(scope="session")
def captaincook_dir() -> Path:
    return DATA / "captaincook4d"


@pytest.fixture(scope="session")
def sample_sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recipe's sample inputs (CaptainCook4D layout, coded recordings), written once."""
    from expvid.suites.promqa.sample_sources import write_sample_sources

    root = tmp_path_factory.mktemp("promqa_sources") / "sources"
    write_sample_sources(root)
    return root
