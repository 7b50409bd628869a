"""Text a database cannot hold, found before an import writes anything.

PostgreSQL stores no NUL character (U+0000), neither in text nor in JSON, and SQLite does: a NUL in a
question, an option or a video id was stored on SQLite and crashed the same import on PostgreSQL.
The same holds for NaN and infinities, which Python's JSON reader accepts. So a candidate directory
is checked here, the same for both, and every such value is named by its file, line and field.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from expvid.schema import RecordProblem

NUL_REASON = "contains a NUL character (U+0000), which the review database cannot store"
NAN_REASON = "NaN or infinite, which is not JSON (PostgreSQL refuses it; SQLite would store it)"


def nul_fields(value: Any, where: str = "") -> list[str]:
    """The fields (`question`, `options.B`, `steps[2].text`, a key) of `value` holding a NUL."""
    if isinstance(value, str):
        return [where or "the value"] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if "\x00" in str(key):
                found.append(f"a key of {where or 'the record'}")
            found += nul_fields(item, name)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += nul_fields(item, f"{where}[{index}]")
    return found


def nan_fields(value: Any, where: str = "") -> list[str]:
    """Fields holding NaN or an infinity (Python's JSON reader takes them; JSON and PostgreSQL do not)."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [where or "the value"]
    found: list[str] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in items:
        found += nan_fields(
            item, f"{where}[{key}]" if isinstance(key, int) else (f"{where}.{key}" if where else str(key))
        )
    return found


def nul_problems(path: Path, line: int, value: Any) -> list[RecordProblem]:
    """Every value of a record the review database could not hold the same on both backends."""
    return [RecordProblem(path, line, f"{field} {NUL_REASON}") for field in nul_fields(value)] + [
        RecordProblem(path, line, f"{field} is {NAN_REASON}") for field in nan_fields(value)
    ]


def read_text_file(path: Path) -> str | RecordProblem:
    """A UTF-8 text file (papers), or the problem naming the line of its first bad byte or NUL."""
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        return RecordProblem(path, line, f"not valid UTF-8 (byte 0x{data[error.start]:02x})")
    if "\x00" in text:
        return RecordProblem(path, text[: text.index("\x00")].count("\n") + 1, NUL_REASON)
    return text
