"""A transcript as speech-to-text returns it: Whisper-style segments with words, plus provenance.

Stored as JSON (`{"segments": [...], "language", "duration", "provenance"}`), the shape
`expvid.media.read_transcript` already reads, so the build treats a transcribed video exactly like
one that came with its transcript.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.construction.state import write_atomic


@dataclass
class SpeechResult:
    segments: list[dict[str, Any]]
    language: str | None
    duration: float
    provenance: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "duration": round(self.duration, 3),
            "provenance": self.provenance,
            "segments": self.segments,
        }

    def write(self, path: Path) -> None:
        write_atomic(path, json.dumps(self.as_json(), ensure_ascii=False, indent=1) + "\n")

    @classmethod
    def read(cls, path: Path) -> SpeechResult:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            segments=list(data["segments"]),
            language=data.get("language"),
            duration=float(data.get("duration") or 0.0),
            provenance=dict(data.get("provenance") or {}),
        )

    def shifted(self, start: float) -> SpeechResult:
        """The transcript on the clock of a video whose audio starts at `start` seconds: every segment
        and word moved by it (what an engine timed from the first sample becomes a video time);
        anything before the video's time 0 is cut."""
        moved = clean_segments(self.segments, offset=start)
        kept = []
        for segment in moved:
            if segment["end"] <= 0:
                continue
            segment["start"] = max(0.0, segment["start"])
            for word in segment.get("words", []):
                word["start"], word["end"] = max(0.0, word["start"]), max(0.0, word["end"])
            kept.append(segment)
        provenance = {**self.provenance, "audio_start": round(start, 3)}
        return SpeechResult(kept, self.language, self.duration, provenance)

    @property
    def text(self) -> str:
        return " ".join(str(s.get("text", "")).strip() for s in self.segments).strip()


def clean_segments(
    segments: list[dict[str, Any]], offset: float = 0.0, *, limit: float | None = None
) -> list[dict[str, Any]]:
    """Segments with stripped text, times shifted by `offset`, empty ones dropped, words kept in
    their segment and never before its start (engines round differently). Whisper decodes 30 s
    windows and can time text past the end of the audio: with `limit` (the audio's end, in the
    shifted clock) such segments are dropped and ends clamped to it."""
    cleaned = []
    for segment in segments:
        text = str(segment.get("text") or "").strip()
        start, end = float(segment["start"]) + offset, float(segment["end"]) + offset
        if limit is not None:
            if start >= limit:
                continue
            end = min(end, limit)
        if not text or end < start:
            continue
        entry: dict[str, Any] = {"start": round(start, 3), "end": round(end, 3), "text": text}
        words = []
        for word in segment.get("words") or []:
            token = str(word.get("word") or word.get("text") or "").strip()
            if not token or word.get("start") is None or word.get("end") is None:
                continue
            w_start = max(start, float(word["start"]) + offset)
            w_end = max(w_start, min(end, float(word["end"]) + offset))
            item = {"word": token, "start": round(w_start, 3), "end": round(w_end, 3)}
            if word.get("probability") is not None:
                item["probability"] = round(float(word["probability"]), 4)
            words.append(item)
        if words:
            entry["words"] = words
        cleaned.append(entry)
    return cleaned
