"""Fixtures shared by every test area."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

import collection_record
import write_a_suite_docs
from dev_venv import purelib_of, venv_with
from expvid.suites.sample import make_sample

# Hypothesis's per-example deadline (200 ms) measures the machine, not the code: on CI's 2 busy cores
# a first example that imports or compiles something takes longer. Correctness is what is tested.
settings.register_profile("expvid", deadline=None)
settings.load_profile("expvid")


def pytest_itemcollected(item: pytest.Item) -> None:
    collection_record.record(item)


@pytest.fixture(scope="session")
def tinyqa_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Python of a fresh virtual environment with docs/write-a-suite.md's packages (TinyQA; TinyMC,
    a parquet release without a judge) pip-installed into it (outside suites, found by their entry
    points); built once per session.

    The new environment sees the developer's expvid through a `.pth` file (`site.addsitedir` of the
    test's own environment), so nothing is installed from a registry."""
    root = tmp_path_factory.mktemp("suite_package")
    blocks = write_a_suite_docs.blocks()  # names start with the package's folder
    for name, text in blocks.items():
        (root / "sources" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "sources" / name).write_text(text, encoding="utf-8")
    packages = sorted({name.split("/")[0] for name in blocks})
    python = venv_with(root, [root / "sources" / package for package in packages])
    for package in packages:  # installed into the new environment, not ours
        assert (purelib_of(python) / package).is_dir(), package
    return python


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample ExpVid benchmark (seed 0), generated once per test session.

    Holds `annotations/` (ten tasks), `videos/` (clips and Level-3 videos, release names),
    `sources/<video_id>/{video.mp4, transcript.srt, paper.md, meta.json}` (six kept experiments and
    two that curation should reject) and `sample_truth.json` (source frame ranges of every clip;
    read it with `expvid.suites.sample.read_truth`). Shared by all tests: treat it as read-only and
    copy it (`shutil.copytree`) before changing anything.
    """
    root = tmp_path_factory.mktemp("expvid_sample") / "sample"
    make_sample(root, seed=0)
    return root
