"""Reading published annotation files and guarding sample directories.

Releases come as JSON arrays or JSON Lines; both
are read record by record with the line each record starts on, so a bad record is reported as
file:line and the rest still loads (a file that cannot be read to its end is a `FileProblem`). Sample generators use `claim_sample_dir` so they never
overwrite a directory they did not create.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from expvid.schema import DataError, RecordProblem
from expvid.schema.dataset import FileProblem

SAMPLE_MARKER = ".expvid_sample.json"


def read_release_bytes(path: Path) -> bytes | FileProblem:
    """The file's bytes, or a problem when it cannot be read at all (then none of it loads)."""
    try:
        return path.read_bytes()
    except OSError as error:
        return FileProblem(path, 0, f"cannot read the file ({error.strerror or error})")


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def json_records(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any] | RecordProblem]]:
    """Each record of a JSON array or a JSON Lines file, with the line it starts on.

    A JSON Lines file is read line by line, so a line that is not UTF-8 or not JSON costs that
    record only. A JSON array that cannot be parsed to its end yields a `FileProblem`: the records
    after the fault cannot be counted.
    """
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"[":
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            line = data[: error.start].count(b"\n") + 1
            yield (
                line,
                FileProblem(
                    path, line, f"not UTF-8 text ({error.reason} at byte {error.start}); file skipped"
                ),
            )
            return
        yield from _array_records(path, text, _skip_space(text, 0))
        return
    yield from jsonl_records(path, data)


def jsonl_records(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any] | RecordProblem]]:
    """Each non-blank line of a JSON Lines file as an object, or a problem naming its line."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield (
                number,
                RecordProblem(path, number, f"not UTF-8 text ({error.reason} at column {error.start + 1})"),
            )
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            yield number, RecordProblem(path, number, f"not valid JSON ({error.msg} at column {error.colno})")
            continue
        if not isinstance(record, dict):
            yield number, RecordProblem(path, number, f"expected a JSON object, got {type(record).__name__}")
            continue
        yield number, record


def _array_records(path: Path, text: str, start: int) -> Iterator[tuple[int, dict[str, Any] | RecordProblem]]:
    decoder = json.JSONDecoder()
    position = _skip_space(text, start + 1)
    while position < len(text) and text[position] != "]":
        line = _line_of(text, position)
        try:
            record, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            yield (
                error.lineno,
                FileProblem(path, error.lineno, f"invalid JSON ({error.msg}); rest of the file skipped"),
            )
            return
        if isinstance(record, dict):
            yield line, record
        else:
            yield line, RecordProblem(path, line, f"expected a JSON object, got {type(record).__name__}")
        position = _skip_space(text, end)
        if position < len(text) and text[position] == ",":
            position = _skip_space(text, position + 1)
        elif position < len(text) and text[position] != "]":
            line = _line_of(text, position)
            yield (
                line,
                FileProblem(path, line, "expected ',' or ']' between records; rest of the file skipped"),
            )
            return


class SampleDirectoryError(RuntimeError):
    """The target directory cannot be written (not empty and not this suite's sample, or no force)."""


def claim_sample_dir(root: Path, suite: str, seed: int, *, force: bool, owned: Sequence[str]) -> None:
    """Make `root` ready for a fresh sample: only an empty directory, or this suite's sample with `force`."""
    marker = root / SAMPLE_MARKER
    if root.exists() and not root.is_dir():
        raise SampleDirectoryError(f"{root} exists and is not a directory")
    if root.exists() and any(root.iterdir()):
        previous = _marker_suite(marker)
        if previous != suite:
            what = f"a {previous} sample" if previous else "files that are not an expvid sample"
            raise SampleDirectoryError(f"{root} is not empty ({what}); choose an empty directory")
        if not force:
            raise SampleDirectoryError(f"{root} already holds a {suite} sample; use --force to regenerate it")
        remove_owned(root, owned)
    root.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"suite": suite, "seed": seed}) + "\n", encoding="utf-8")


def remove_owned(root: Path, owned: Iterable[str]) -> None:
    """Remove what a sample generator owns in `root` (each name a folder or a file), before it regenerates."""
    for name in owned:
        target = root / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _marker_suite(marker: Path) -> str | None:
    try:
        value = json.loads(marker.read_text(encoding="utf-8")).get("suite")
    except (OSError, ValueError, AttributeError):
        return None
    return str(value) if value else None


def release_root(root: Path | str, suite_label: str) -> Path:
    """The resolved dataset root; `DataError` when it is not a directory."""
    path = Path(root).expanduser()
    if not path.is_dir():
        raise DataError(f"{path}: not a directory (expected a {suite_label} release root)")
    return path.resolve()


def wanted_tasks(
    tasks: Iterable[str] | str | None, known: Iterable[str], *, suite_label: str, noun: str
) -> set[str]:
    """The task names asked for (all when None); `DataError` naming the valid ones for an unknown name."""
    valid = set(known)
    wanted = set(valid if tasks is None else ([tasks] if isinstance(tasks, str) else tasks))
    unknown = sorted(wanted - valid)
    if unknown:
        raise DataError(
            f"unknown {suite_label} {noun}(s) {', '.join(unknown)}; {noun}s are: {', '.join(sorted(valid))}"
        )
    return wanted
