"""Finding the experiments in a sources folder: `SOURCES/<folder>/{video, transcript, paper, meta.json}`.

One folder per experiment (the sample generator's `sources/` is one such folder):

- a video: `video.mp4` (or .mkv, .mov, .webm, .avi; or the only video file in the folder);
- a timestamped transcript: `transcript.srt` / `.vtt` / `.json` (or the only such file);
- a paper: `paper.md` or `paper.pdf` (Markdown preferred when both exist);
- `meta.json`: `{"id", "title", "discipline"}` and optional `duration` (seconds).

Curation only needs the transcript and a duration: a folder with a `duration` in `meta.json` and no
video yet is scored like the others (the paper scores tens of thousands of transcripts and keeps a few
hundred videos), and only the experiments curation keeps need their videos on disk. When the video is
there, its probed duration wins over `meta.json`.

A folder with a video and no transcript gets one from speech-to-text when the build is given an
engine (`-R stt=...`, `expvid.construction.speech.fill_transcripts`); without one it is rejected
with that said. A folder missing a piece is still listed, with the problem, so curation can report
why it was rejected instead of the experiment silently vanishing. Only a missing sources folder, or two folders
claiming the same id, stop the build (with both paths named).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from expvid.schema import DataError

VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v")
TRANSCRIPT_SUFFIXES = (".srt", ".vtt", ".json")
PAPER_SUFFIXES = (".md", ".markdown", ".pdf")


@dataclass(frozen=True)
class SourceExperiment:
    video_id: str
    title: str
    discipline: str
    folder: Path
    video: Path | None
    transcript: Path | None
    paper: Path | None
    problems: tuple[str, ...] = ()
    #: `duration` from meta.json (seconds), used when the video is not on disk (yet).
    meta_duration: float | None = None

    @property
    def usable(self) -> bool:
        """Has what curation needs (the video is needed once curation keeps the experiment)."""
        return self.transcript is not None and not self.problems

    @property
    def can_transcribe(self) -> bool:
        """No transcript, but a video whose narration speech-to-text can hear."""
        return self.transcript is None and self.video is not None

    def with_transcript(self, path: Path) -> SourceExperiment:
        """This experiment with `path` (made by speech-to-text) as its transcript."""
        missing = missing_transcript(self.folder)
        return replace(self, transcript=path, problems=tuple(p for p in self.problems if p != missing))

    def with_problem(self, problem: str) -> SourceExperiment:
        return replace(self, problems=(*self.problems, problem))


def missing_transcript(folder: Path) -> str:
    """The problem of a folder without a transcript (one wording, so a transcribed folder loses it)."""
    return (
        f"{folder}: no transcript (transcript.srt, .vtt or .json; or give speech-to-text, "
        "-R stt=faster-whisper:MODEL or -R stt=openai:MODEL@URL)"
    )


def _pick(folder: Path, stem: str, suffixes: tuple[str, ...], exclude: tuple[str, ...] = ()) -> Path | None:
    for suffix in suffixes:
        candidate = folder / f"{stem}{suffix}"
        if candidate.is_file():
            return candidate
    found = sorted(
        p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes and p.name not in exclude
    )
    return found[0] if len(found) == 1 else None


def _read_meta(folder: Path) -> tuple[dict[str, object], list[str]]:
    path = folder / "meta.json"
    if not path.is_file():
        return {}, [f"{path}: meta.json is missing (needs id, title, discipline)"]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        return {}, [f"{path}:{error.lineno}: not valid JSON ({error.msg})"]
    except (OSError, UnicodeDecodeError) as error:
        return {}, [f"{path}: cannot read ({error})"]
    if not isinstance(data, dict):
        return {}, [f"{path}: expected a JSON object"]
    problems = [
        f"{path}: '{key}' must be a non-empty string"
        for key in ("title", "discipline")
        if not isinstance(data.get(key), str) or not str(data.get(key)).strip()
    ]
    return data, problems


def _duration(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        return None
    return float(value)


def discover_sources(root: Path | str) -> list[SourceExperiment]:
    """Every experiment folder under `root`, sorted by video id."""
    base = Path(root).expanduser()
    if not base.is_dir():
        raise DataError(f"{base}: sources folder not found (expected one sub-folder per experiment)")
    experiments: dict[str, SourceExperiment] = {}
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        meta, problems = _read_meta(folder)
        raw_id = meta.get("id", folder.name)
        video_id = (
            str(raw_id).strip() if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else ""
        )
        if not video_id:
            problems.append(f"{folder / 'meta.json'}: 'id' must be a string or an integer")
            video_id = folder.name
        video = _pick(folder, "video", VIDEO_SUFFIXES)
        transcript = _pick(folder, "transcript", TRANSCRIPT_SUFFIXES, exclude=("meta.json",))
        paper = _pick(folder, "paper", PAPER_SUFFIXES)
        meta_duration = _duration(meta.get("duration"))
        if "duration" in meta and meta_duration is None:
            problems.append(f"{folder / 'meta.json'}: 'duration' must be a positive number of seconds")
        if video is None and meta_duration is None:
            problems.append(
                f"{folder}: no video file (video.mp4, .mkv, .mov, .webm, .avi) and no 'duration' in meta.json"
            )
        if transcript is None:
            problems.append(missing_transcript(folder))
        if video_id in experiments:
            raise DataError(
                f"{folder}: experiment id {video_id!r} is also used by {experiments[video_id].folder}"
            )
        experiments[video_id] = SourceExperiment(
            video_id=video_id,
            title=str(meta.get("title") or "").strip(),
            discipline=str(meta.get("discipline") or "").strip(),
            folder=folder,
            video=video,
            transcript=transcript,
            paper=paper,
            problems=tuple(problems),
            meta_duration=meta_duration,
        )
    if not experiments:
        raise DataError(f"{base}: no experiment folders found")
    return [experiments[key] for key in sorted(experiments)]
