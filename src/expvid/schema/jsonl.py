"""Reading JSONL files so that every problem names its file and line.

Two modes: lenient (collect problems, keep every good line) and strict (raise one error listing all
problems). Loaders build on `read_jsonl` so that a malformed line never costs the rest of the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True)
class RecordProblem:
    """A record that could not be used, located as `file:line`."""

    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class DataError(ValueError):
    """Raised when input data is unusable; the message names every file:line at fault."""

    def __init__(self, problems: list[RecordProblem] | str) -> None:
        if isinstance(problems, str):
            self.problems: list[RecordProblem] = []
            super().__init__(problems)
            return
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{len(problems)} problem(s) in the data:\n{lines}")


def describe_validation_error(error: ValidationError) -> str:
    """A one-line summary of a pydantic error: field path and message for each failure."""
    parts = []
    for failure in error.errors():
        where = ".".join(str(p) for p in failure["loc"]) or "record"
        parts.append(f"{where}: {failure['msg']}")
    return "; ".join(parts)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any] | RecordProblem]]:
    """Yield `(line_number, record)` for each non-blank line, or a `RecordProblem` for a bad one.

    A line that is not UTF-8, not JSON, or JSON but not an object, becomes a problem; iteration
    continues (a byte that is not UTF-8 used to end the whole file with a UnicodeDecodeError).
    """
    with path.open("rb") as handle:
        for number, data in enumerate(handle, start=1):
            if number == 1 and data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
                data = data[3:]
            try:
                raw = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = data[exc.start]
                message = f"not valid UTF-8 (byte 0x{byte:02x} at column {exc.start + 1})"
                yield number, RecordProblem(path, number, message)
                continue
            text = raw.strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                yield number, RecordProblem(path, number, f"not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if not isinstance(value, dict):
                kind = type(value).__name__
                yield number, RecordProblem(path, number, f"expected a JSON object, got {kind}")
                continue
            yield number, value
