"""Fixtures shared by every test area."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import settings

import collection_record
import write_a_suite_docs
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
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    packages = sorted({name.split("/")[0] for name in blocks})
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_expvid_dev.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         *(str(root / package) for package in packages)],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    for package in packages:  # installed into the new environment, not ours
        assert (Path(purelib) / package).is_dir(), package
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
