"""File-level helpers shared by the transcript readers and writers: decoding, atomic writes, timing lines.

Caption libraries are forgiving in ways that lose data silently: `srt` folds a block with a garbled
timestamp into the previous cue's text, and `webvtt-py` (non-strict) skips it. So before handing a
file to a library, each reader finds every timing line (`-->`) itself and checks its timestamps; a bad
one is reported as `file: cue N: line L`, and afterwards the number of cues the library returned must
equal the number of timing lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from expvid.media.atomic import write_bytes_atomic
from expvid.media.transcript_model import Cue, Transcript, TranscriptError

_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def read_text_file(path: Path) -> str:
    """Read a caption file as text: UTF-8 (with or without BOM), or UTF-16 with a BOM.

    No guessing of legacy code pages: a wrong guess would turn "µL" into mojibake without complaint.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TranscriptError(path, f"cannot read file ({exc.strerror or exc})") from exc
    encoding = next((name for bom, name in _BOMS if data.startswith(bom)), "utf-8")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TranscriptError(
            path, f"not {encoding.upper()} text (byte {exc.start}); convert the file to UTF-8", line=line
        ) from exc
    return text.lstrip("\ufeff")


def write_text_atomic(path: Path, text: str) -> Path:
    """Write UTF-8 text via a temporary file and rename, so a crash never leaves half a file."""
    return write_bytes_atomic(Path(path), text.encode("utf-8"))


def cues_of(transcript_or_cues: Transcript | Sequence[Cue]) -> tuple[Cue, ...]:
    """The cues of a transcript, or a sequence of cues, as a tuple (what writers accept)."""
    if isinstance(transcript_or_cues, Transcript):
        return transcript_or_cues.cues
    return tuple(transcript_or_cues)


@dataclass(frozen=True, slots=True)
class TimingLine:
    """A `start --> end` line: its 1-based line number, cue ordinal and times in milliseconds."""

    line: int
    cue: int
    start_ms: int
    end_ms: int


def scan_timing_lines(
    path: Path, text: str, parse_timestamp: Callable[[str], int | None], *, skip_prefix: str | None = None
) -> list[TimingLine]:
    """Find every line containing `-->` and parse both timestamps with `parse_timestamp`.

    `parse_timestamp` returns milliseconds, or None for a malformed timestamp, which raises
    `TranscriptError` naming the cue ordinal and line. Lines starting with `skip_prefix` (WebVTT
    `NOTE` comments) are ignored.
    """
    found: list[TimingLine] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if "-->" not in line or (skip_prefix and line.lstrip().startswith(skip_prefix)):
            continue
        left, _, right = line.partition("-->")
        right_fields = right.split()
        start = parse_timestamp(left.strip())
        end = parse_timestamp(right_fields[0]) if right_fields else None
        if start is None or end is None:
            raise TranscriptError(
                path, f"malformed timestamp in {line.strip()!r}", cue=len(found) + 1, line=number
            )
        found.append(TimingLine(line=number, cue=len(found) + 1, start_ms=start, end_ms=end))
    return found


def check_cue_count(path: Path, timings: Sequence[TimingLine], parsed_starts_ms: Sequence[int]) -> None:
    """Raise when the library returned a different number of cues than there are timing lines.

    The first timing line whose start does not match the library's cue at the same position is the
    block the library skipped or swallowed; the error names it.
    """
    if len(timings) == len(parsed_starts_ms):
        return
    culprit: TimingLine | None = None
    for timing, start in zip(timings, parsed_starts_ms, strict=False):
        if timing.start_ms != start:
            culprit = timing
            break
    else:
        if len(timings) > len(parsed_starts_ms):
            culprit = timings[len(parsed_starts_ms)]
    raise TranscriptError(
        path,
        f"found {len(timings)} timing lines but could read only {len(parsed_starts_ms)} cues; "
        "this cue block is malformed",
        cue=culprit.cue if culprit else None,
        line=culprit.line if culprit else None,
    )
