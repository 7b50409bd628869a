"""Fixtures for the Hub tests: a loopback Hub serving the bundled sample as `OpenGVLab/ExpVid`.

No test reaches the network: every download goes to `expvid.fakes.hub.LoopbackHub` on 127.0.0.1,
through the real huggingface_hub client. The Hugging Face cache and token are isolated per test.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from expvid.fakes.hub import LoopbackHub

CARD = b"""---
license: cc-by-nc-4.0
pretty_name: ExpVid
configs:
- config_name: level1_tools
  data_files:
  - split: test
    path: annotations/level1/tools.jsonl
---
# ExpVid (loopback copy of the expvid sample)
"""


@pytest.fixture(autouse=True)
def _isolated_hf(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    # Whatever the developer's shell sets for the Hub does not reach these tests (the scorers no
    # longer set HF_HUB_OFFLINE themselves: test_fetch_after_offline_scoring.py).
    names = ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HF_ENDPOINT")
    for name in (*names, "HUGGING_FACE_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    with LoopbackHub(page_size=25) as server:  # small pages: the listing is paginated as on the Hub
        yield server


def _release_files(sample_dir: Path) -> dict[str, bytes | Path]:
    files: dict[str, bytes | Path] = {"README.md": CARD}
    for folder in ("annotations", "videos"):
        for path in sorted((sample_dir / folder).rglob("*")):
            if path.is_file():
                files[path.relative_to(sample_dir).as_posix()] = path
    return files


@pytest.fixture
def release_files(sample_dir: Path) -> Callable[[Path], dict[str, bytes | Path]]:
    """`release_files(sample_dir)`: the sample in the release layout (annotations + videos) as repo files."""
    return _release_files


@pytest.fixture
def expvid_repo(hub: LoopbackHub, sample_dir: Path) -> str:
    """`OpenGVLab/ExpVid` on the loopback hub (one commit on main); returns the commit sha."""
    return hub.commit("OpenGVLab/ExpVid", _release_files(sample_dir))


def _noise_video(path: Path, seconds: float = 4.2) -> Path:
    """A lossless H.264 clip of noise: about 3 MB a second, so a few seconds exceed one 10 MiB chunk."""
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "nullsrc=s=320x240:r=25,geq=random(1)*255:128:128",
         "-t", str(seconds), "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(path)],
        check=True,
    )  # fmt: skip
    return path


@pytest.fixture
def noise_video() -> Callable[..., Path]:
    """`noise_video(path, seconds=4.2)`: writes a large, real, readable video made by ffmpeg."""
    return _noise_video
