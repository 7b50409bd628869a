"""Fixtures for speech-to-text: a small video whose audio track is real synthesised speech.

espeak-ng (Debian package) speaks three sentences at known times; CI installs it (`.ci/run`).
Without it these tests fail with the install command, or skip unless EXPVID_REQUIRE_ESPEAK=1.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from expvid.media.audio import SAMPLE_RATE, mux_audio
from expvid.media.synth import scene_frame, write_video

sys.path.insert(0, str(Path(__file__).parent))

from speech_helpers import NarratedVideo

CUES = (
    (0.5, 3.0, "Add five hundred microliters of buffer to the tube."),
    (4.0, 6.5, "Vortex the tube for ten seconds."),
    (7.5, 9.5, "The balance reads two point five grams."),
)
SECONDS, FPS = 10.0, 4


def require_espeak() -> None:
    if shutil.which("espeak-ng") is None:
        message = "espeak-ng is not installed (apt-get install -y espeak-ng)"
        if os.environ.get("EXPVID_REQUIRE_ESPEAK") == "1":
            pytest.fail(message + " and EXPVID_REQUIRE_ESPEAK=1")
        pytest.skip(message)


@pytest.fixture(scope="session")
def narrated_video(tmp_path_factory: pytest.TempPathFactory) -> NarratedVideo:
    require_espeak()
    from expvid.suites.sample.narration import narration_track

    folder = tmp_path_factory.mktemp("narrated")
    silent = folder / "silent.mp4"
    frames = (scene_frame(i, 160, 96, seed=3, fps=FPS) for i in range(int(SECONDS * FPS)))
    write_video(silent, frames, fps=FPS, preset="ultrafast", threads=1)
    track = narration_track(CUES, SECONDS)
    assert len(track) == SECONDS * SAMPLE_RATE
    out = folder / "video.mp4"
    mux_audio(silent, track, SAMPLE_RATE, out)
    return NarratedVideo(out, CUES, SECONDS)


@pytest.fixture(scope="session")
def tiny_whisper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tiny_whisper import make_tiny_whisper

    return make_tiny_whisper(tmp_path_factory.mktemp("tiny_whisper"))
