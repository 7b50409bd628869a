"""Transcripts for the experiments of a sources folder that have a video but none, for either recipe.

`fill_transcripts(sources, stage, epochs)` asks the transcription stage (`stage.py`: cached by audio
content, counted, priced) for every experiment that can be transcribed, side by side (the stage
bounds how many tracks are in flight), and returns:

- the experiments, each transcribed one with the produced transcript in place of the missing one
  (and without the "no transcript" problem), so curation, drafting and the audits read it like a
  transcript that came with the video;
- the provenance of every experiment's transcript: a file of its folder (`{"engine": "file",
  "file": "transcript.srt"}`) or speech-to-text (engine, model, requested and detected language,
  the audio's sha256, the `--redo transcription` epoch), for the candidate directory's sidecars
  and the reviewers' pages;
- the failures, one line per experiment naming its video. A failed experiment keeps no transcript
  and gets the failure as its problem: curation rejects it with that reason, the build report lists
  it as a failed unit (exit 1), and the next run asks again; the others go on. A video with no audio
  stream is not a failure (nothing would change on a re-run): it is rejected with that reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.construction.sources import SourceExperiment
from expvid.construction.speech.local import SpeechEngineError
from expvid.construction.speech.result import SpeechResult
from expvid.construction.speech.settings import SpeechSettings
from expvid.construction.speech.stage import SpeechStage
from expvid.construction.state import epoch_of
from expvid.media.audio import has_audio
from expvid.media.errors import MediaError
from expvid.schema import DataError

#: The stage name `--redo` takes (`--redo transcription` or `--redo transcription:ID`).
TRANSCRIPTION_STAGE = "transcription"


@dataclass
class FilledSources:
    sources: list[SourceExperiment]
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    transcribed: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)


def open_stage(settings: SpeechSettings | None, state_root: Path, *, concurrency: int) -> SpeechStage | None:
    """The build's transcription stage (transcripts under `.build/speech/`), or None without an
    engine; an engine that cannot run here (faster-whisper not installed) is a `DataError` before
    anything is paid."""
    if settings is None:
        return None
    try:
        return SpeechStage(settings, state_root / "speech", concurrency=concurrency)
    except SpeechEngineError as error:
        raise DataError(f"speech-to-text: {error}") from None


def file_provenance(source: SourceExperiment) -> dict[str, Any]:
    """Provenance of a transcript that came with the video."""
    assert source.transcript is not None
    return {"engine": "file", "file": source.transcript.name}


def transcription_epoch(epochs: dict[str, int], video_id: str) -> int:
    return epoch_of(epochs, TRANSCRIPTION_STAGE, video_id)


async def fill_transcripts(
    sources: list[SourceExperiment],
    stage: SpeechStage | None,
    epochs: dict[str, int] | None = None,
    *,
    done: Callable[[], None] | None = None,
) -> FilledSources:
    """See the module docstring; `done` is called once per experiment transcribed (progress)."""
    filled = FilledSources(sources=list(sources))
    for source in sources:
        if source.transcript is not None:
            filled.provenance[source.video_id] = file_provenance(source)
    if stage is None:
        return filled
    wanted = [i for i, s in enumerate(sources) if s.can_transcribe]

    async def one(index: int) -> None:
        source = sources[index]
        assert source.video is not None
        epoch = transcription_epoch(epochs or {}, source.video_id)
        if not await asyncio.to_thread(has_audio, source.video):  # nothing to hear: rejected, not retried
            if done is not None:
                done()
            filled.sources[index] = source.with_problem(
                f"{source.video}: no transcript, and no audio stream for speech-to-text to hear"
            )
            return
        try:
            path = await stage.transcript_for(source.video, epoch)
            result = await asyncio.to_thread(SpeechResult.read, path)
        except (MediaError, SpeechEngineError, OSError, ValueError, KeyError) as error:
            message = f"{source.video}: speech-to-text failed: {error}"
            filled.failures[source.video_id] = message
            filled.sources[index] = source.with_problem(message)
            return
        finally:
            if done is not None:
                done()
        provenance = dict(result.provenance)
        provenance.setdefault("language", result.language)
        if epoch:
            provenance["epoch"] = epoch
        filled.provenance[source.video_id] = provenance
        filled.transcribed.append(source.video_id)
        filled.sources[index] = source.with_transcript(path)

    await asyncio.gather(*(one(i) for i in wanted))
    filled.transcribed.sort()
    return filled


@dataclass
class TranscriptionPlan:
    """What `--dry-run` knows about speech-to-text: the experiments with transcripts found in the
    cache put in place (so the rest of the plan uses the real narration), and seconds of audio still
    to transcribe or found cached, per experiment."""

    sources: list[SourceExperiment]
    settings: SpeechSettings | None
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: dict[str, float] = field(default_factory=dict)
    cached: dict[str, float] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)

    @property
    def minutes(self) -> float:
        return sum(self.pending.values()) / 60

    @property
    def cached_minutes(self) -> float:
        return sum(self.cached.values()) / 60

    def cost(self) -> float | None:
        """USD for the audio still to transcribe: 0 locally, unknown (None) for a remote engine
        without a price, never a guess."""
        settings = self.settings
        if settings is None or not settings.remote or not self.pending:
            return 0.0
        if settings.price_per_minute is None:
            return None
        return round(self.minutes * settings.price_per_minute, 6)

    def note(self) -> str | None:
        if self.settings is None:
            return None
        engine = f"{self.settings.engine}:{self.settings.model}"
        text = (
            f"speech-to-text ({engine}): {len(self.pending)} video(s), {self.minutes:.2f} min of audio to "
            f"transcribe; {len(self.cached)} found in the transcript cache ({self.cached_minutes:.2f} min, free)"
        )
        if self.pending:
            text += "; their narration is planned at 150 words a minute over the whole video (an upper bound)"
        if self.settings.remote and self.settings.price_per_minute is None and self.pending:
            text += "; no price per minute given (-R stt_price=USD): cost unknown"
        for video_id, why in sorted(self.unreadable.items()):
            text += f"; {video_id}: {why}"
        return text


def plan_transcripts(
    sources: list[SourceExperiment],
    settings: SpeechSettings | None,
    state_root: Path,
    epochs: dict[str, int] | None = None,
) -> TranscriptionPlan:
    """The dry run's view of `fill_transcripts`: nothing decoded, asked or written (blocking: probes
    the videos still to transcribe for their length)."""
    from expvid.media.sampler import probe

    plan = TranscriptionPlan(sources=list(sources), settings=settings)
    for source in sources:
        if source.transcript is not None:
            plan.provenance[source.video_id] = file_provenance(source)
    stage = open_stage(settings, state_root, concurrency=1)
    if stage is None:
        return plan
    for index, source in enumerate(sources):
        if not source.can_transcribe:
            continue
        assert source.video is not None
        epoch = transcription_epoch(epochs or {}, source.video_id)
        path = stage.cached_path(source.video, epoch, planning=True)
        if path is not None:
            result = SpeechResult.read(path)
            plan.sources[index] = source.with_transcript(path)
            plan.provenance[source.video_id] = {**result.provenance, "language": result.language}
            plan.cached[source.video_id] = result.duration
            continue
        try:
            plan.pending[source.video_id] = probe(source.video).duration
        except MediaError as error:
            plan.unreadable[source.video_id] = str(error)
    return plan
