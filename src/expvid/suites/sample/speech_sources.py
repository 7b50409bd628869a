"""Inputs for the build recipes' speech path: narrated videos, papers, no transcripts.

`make_speech_sources(DIR)` writes `DIR/sources/<video_id>/{video.mp4, paper.md, meta.json}` for the
sample's kept experiments: the same scripted experiment videos as the ExpVid sample, with the
narration spoken by espeak-ng at the times the ExpVid sample's transcript gives (so a speech-to-text
engine has real speech to hear, and the truth of when each step is said is known), and no
transcript file, which is what `expvid build [--recipe NAME] -R stt=...` is for (every recipe that
transcribes its videos reads them; `expvid sample make DIR --recipe NAME`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import srt

from expvid.media.audio import SAMPLE_RATE, mux_audio
from expvid.media.synth import write_video
from expvid.suites.sample.layout import PRESET, SOURCE_GOP, source_dir
from expvid.suites.sample.narration import narration_track
from expvid.suites.sample.render import FrameRenderer
from expvid.suites.sample.scripts import load_scripts
from expvid.suites.sample.sources import paper_markdown, transcript_srt
from expvid.suites.sample.timeline import plan_timeline

MARKER = ".expvid-speech-sources.json"


class SpeechSourcesError(RuntimeError):
    """The directory cannot be written (not empty and not ours)."""


@dataclass(frozen=True)
class SpeechSources:
    root: Path
    experiments: tuple[str, ...]
    seconds: float
    audio_seconds: float


def make_speech_sources(
    directory: Path | str, seed: int = 0, *, experiments: int | None = None, force: bool = False
) -> SpeechSources:
    """Write narrated sources for the first `experiments` kept experiments (all when None)."""
    started = time.perf_counter()
    root = Path(directory).expanduser()
    if root.is_dir() and any(root.iterdir()):
        if not (root / MARKER).is_file():
            raise SpeechSourcesError(
                f"refusing to write into {root}: it is not empty and holds no expvid speech sample"
            )
        if not force:
            raise SpeechSourcesError(f"{root} already holds a speech sample; pass --force to overwrite it")
        shutil.rmtree(root / "sources", ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text(
        json.dumps({"generator": "expvid.suites.sample.speech_sources", "seed": seed}) + "\n"
    )
    scripts = [s for s in load_scripts() if s.kept][:experiments]
    audio_seconds = 0.0
    for script in scripts:
        timeline = plan_timeline(script, seed)
        folder = root / source_dir(script.video_id)
        folder.mkdir(parents=True, exist_ok=True)
        cues = [
            (c.start.total_seconds(), c.end.total_seconds(), c.content)
            for c in srt.parse(transcript_srt(script, timeline))
        ]
        track = narration_track(cues, timeline.duration)
        audio_seconds += timeline.duration
        renderer = FrameRenderer(script, timeline)
        with tempfile.TemporaryDirectory() as scratch:
            silent = Path(scratch) / "silent.mp4"
            write_video(
                silent,
                renderer.frames([(0, timeline.n_frames)]),
                fps=timeline.fps,
                gop=SOURCE_GOP,
                bframes=0,
                preset=PRESET,
                threads=1,
            )
            mux_audio(silent, track, SAMPLE_RATE, folder / "video.mp4")
        (folder / "paper.md").write_text(paper_markdown(script), encoding="utf-8", newline="\n")
        meta = {"id": script.video_id, "title": script.title, "discipline": script.discipline}
        (folder / "meta.json").write_text(
            json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return SpeechSources(
        root, tuple(s.video_id for s in scripts), time.perf_counter() - started, audio_seconds
    )
