"""Spoken narration for the sample's videos, synthesised offline with espeak-ng (Debian: espeak-ng).

`narration_track(cues, duration)` speaks each cue's text and places it at the cue's start (sped up
when it would run past the cue's end), giving one 16 kHz mono int16 track for the whole video, which
`expvid.media.audio.mux_audio` adds to the rendered video. A build recipe's speech-to-text inputs
are such videos without a transcript: speech-to-text has real speech to hear.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from expvid.media.audio import SAMPLE_RATE, read_wav

VOICE = "en-us"
WORDS_PER_MINUTE = 175


class NarrationError(RuntimeError):
    """espeak-ng is missing or failed; the message says how to install it."""


def espeak_command() -> str:
    command = shutil.which("espeak-ng") or shutil.which("espeak")
    if command is None:
        raise NarrationError(
            "espeak-ng is not installed (Debian/Ubuntu: apt-get install -y espeak-ng); "
            "it synthesises the sample's narration offline"
        )
    return command


def speak(text: str, *, speed: int = WORDS_PER_MINUTE) -> np.ndarray:
    """`text` spoken by espeak-ng, as int16 mono samples at 16 kHz."""
    command = espeak_command()
    with tempfile.TemporaryDirectory() as folder:
        wav = Path(folder) / "speech.wav"
        result = subprocess.run(
            [command, "-v", VOICE, "-s", str(speed), "-w", str(wav), text],
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0 or not wav.is_file():
            raise NarrationError(f"espeak-ng failed ({result.returncode}): {result.stderr.strip()[:200]}")
        samples, rate = read_wav(wav)
    if rate != SAMPLE_RATE:
        positions = np.arange(0, len(samples), rate / SAMPLE_RATE)
        samples = np.interp(positions, np.arange(len(samples)), samples.astype(np.float32)).astype(np.int16)
    return samples


def narration_track(cues: Sequence[tuple[float, float, str]], duration: float) -> np.ndarray:
    """One track of `duration` seconds with each (start, end, text) spoken from `start`."""
    track = np.zeros(round(duration * SAMPLE_RATE), dtype=np.int16)
    for start, end, text in cues:
        speech = speak(text)
        room = max(0.5, end - start)
        if len(speech) / SAMPLE_RATE > room:  # too long for its slot: say it faster
            factor = len(speech) / SAMPLE_RATE / room
            speech = speak(text, speed=min(450, round(WORDS_PER_MINUTE * factor * 1.05)))
        first = round(start * SAMPLE_RATE)
        piece = speech[: max(0, len(track) - first)]
        track[first : first + len(piece)] = piece
    return track
