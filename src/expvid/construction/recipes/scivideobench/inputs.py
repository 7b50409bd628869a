"""One experiment as the roles see it: timed narration, paper text, frames labelled with their times.

The narration comes from the folder's transcript, or from speech-to-text when there is none
(`expvid.construction.speech.fill_transcripts`, cached by audio content); which one is recorded
(`transcript_provenance`) and goes into every item's provenance and the reviewers' page. Frames are
sampled once per experiment (uniform over the whole video, `frames` of them, aspect kept) and shared
by the generator, the evaluator and the comparer: as images each preceded by its time as "[mm:ss]"
so a model can cite it (`frames`), or as one video whose frame times are stated before it
(`video_frames`, for models that take video). The discipline label of meta.json is placed among
SciVideoBench's four (`disciplines.py`) or the experiment is rejected with the reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.construction.papers import PaperError, _pdf_text
from expvid.construction.recipes.scivideobench.disciplines import DisciplineMap
from expvid.construction.recipes.scivideobench.schemas import clock
from expvid.construction.sources import SourceExperiment
from expvid.media.errors import MediaError
from expvid.media.info import VideoInfo
from expvid.media.sampler import probe, sample_video
from expvid.media.transcript_model import Transcript
from expvid.media.transcripts import TranscriptError, read_transcript
from expvid.models.types import ContentPart, ImagePart, TextPart


@dataclass
class Experiment:
    source: SourceExperiment
    info: VideoInfo | None = None
    transcript: Transcript | None = None
    transcript_path: Path | None = None
    transcript_provenance: dict[str, Any] = field(default_factory=dict)
    paper: str = ""
    #: One of SciVideoBench's four disciplines (placed from meta.json's label); "" when refused.
    discipline: str = ""
    subject: str | None = None
    problems: list[str] = field(default_factory=list)
    _sampled: list[tuple[float, ImagePart]] | None = None

    @property
    def video_id(self) -> str:
        return self.source.video_id

    @property
    def duration(self) -> float:
        return self.info.duration if self.info is not None else 0.0

    def transcript_lines(self) -> str:
        assert self.transcript is not None
        return "\n".join(f"{clock(c.start)}-{clock(c.end)}: {c.text}" for c in self.transcript.cues)

    @property
    def narration(self) -> str:
        return self.transcript.text if self.transcript is not None else ""

    @property
    def discipline_text(self) -> str:
        """What the prompts say: "Biology (Neuroscience)"."""
        return f"{self.discipline} ({self.subject})" if self.subject else self.discipline

    def stamp(self) -> str:
        """Content identity of the inputs every stage reads (transcript text, paper, video length,
        title and discipline)."""
        payload = json.dumps(
            [
                self.transcript_lines(),
                self.paper,
                round(self.duration, 2),
                self.source.title,
                self.discipline_text,
            ]
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:20]

    async def sampled(self, count: int, max_side: int) -> list[tuple[float, ImagePart]]:
        """(time, frame) for `count` frames uniform over the video, sampled once."""
        if self._sampled is None:
            assert self.source.video is not None
            found = await asyncio.to_thread(
                sample_video, self.source.video, num_frames=count, size=None, max_side=max_side, workers=1
            )
            self._sampled = [(f.time, ImagePart(data=f.data, mime=f.mime)) for f in found.frames]
        return self._sampled

    async def frames(self, count: int, max_side: int) -> list[ContentPart]:
        """The frames as images, each preceded by its time "[mm:ss]"."""
        parts: list[ContentPart] = []
        for time, image in await self.sampled(count, max_side):
            parts += [TextPart(text=f"[{clock(time)}]"), image]
        return parts

    async def video_frames(self, count: int, max_side: int) -> tuple[list[ImagePart], list[float]]:
        """The frames as one video (consecutive images, no labels between them) and their times."""
        sampled = await self.sampled(count, max_side)
        return [image for _, image in sampled], [time for time, _ in sampled]


def _paper_text(path: Path) -> str:
    if path.suffix.lower() == ".pdf":
        return _pdf_text(path)
    return path.read_text(encoding="utf-8")


def _meta_subject(folder: Path) -> str | None:
    try:
        data = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("subject") if isinstance(data, dict) else None
    return value.strip() if isinstance(value, str) and value.strip() else None


async def load_experiment(
    source: SourceExperiment,
    provenance: dict[str, Any] | None = None,
    disciplines: DisciplineMap | None = None,
) -> Experiment:
    """Probe, read the transcript (the folder's, or the one speech-to-text made: `fill_transcripts`
    ran first) and the paper, place the discipline; problems are collected, never raised."""
    experiment = Experiment(
        source=source,
        problems=list(source.problems),
        subject=_meta_subject(source.folder),
        transcript_provenance=dict(provenance or {}),
    )
    try:
        placed = (disciplines or DisciplineMap()).place(source.discipline, experiment.subject)
        experiment.discipline, experiment.subject = placed.discipline, placed.subject
    except ValueError as error:
        experiment.problems.append(f"{source.folder / 'meta.json'}: {error}")
    if source.video is None:
        experiment.problems.append(f"{source.folder}: no video file (the recipe needs the video)")
        return experiment
    try:
        experiment.info = await asyncio.to_thread(probe, source.video)
    except MediaError as error:
        experiment.problems.append(str(error))
        return experiment
    if source.paper is None:
        experiment.problems.append(f"{source.folder}: no paper (paper.md or paper.pdf)")
    else:
        try:
            experiment.paper = await asyncio.to_thread(_paper_text, source.paper)
        except (OSError, UnicodeDecodeError, PaperError) as error:
            experiment.problems.append(f"{source.paper}: cannot read the paper ({error})")
    path = source.transcript
    if path is not None:
        try:
            experiment.transcript = await asyncio.to_thread(read_transcript, path)
            experiment.transcript_path = path
            if not experiment.transcript.cues:
                experiment.problems.append(f"{path}: the transcript has no speech")
        except TranscriptError as error:
            experiment.problems.append(str(error))
    return experiment
