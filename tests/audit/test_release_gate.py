"""The release gate's verdict and its reviewed exception file (`expvid.audit.gate`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from audit_releases import clean_text, planted_longest

from expvid.audit import AuditOptions, audit_items
from expvid.audit.gate import decide, read_exceptions
from expvid.schema import DataError


@pytest.fixture(scope="module")
def leaky():  # type: ignore[no-untyped-def]
    """A release whose "longest" task gives its answer away by length, and a clean task."""
    rng = random.Random(3)
    items = [planted_longest(i, rng) for i in range(60)] + [clean_text(100 + i, rng) for i in range(60)]
    return audit_items(items, options=AuditOptions(embeddings=False))


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_flagged_solver_blocks_until_a_reviewed_exception_accepts_it(leaky, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    flagged = {(s.name, s.task) for s in leaky.flagged_solvers}
    assert ("longest option", "longest") in flagged and not any(t == "names" for _, t in flagged)
    blocked = decide(leaky)
    assert not blocked.passed and {(f.solver, f.task) for f in blocked.blocking} == flagged
    lines = ["# reviewed 2025-06-01", "accept:"]
    for name, task in sorted(flagged):
        lines += [
            f'  - solver: "{name}"',
            f"    task: {task}",
            "    reason: long answers are the protocol's wording",
        ]
    exceptions = read_exceptions(_file(tmp_path, "accept.yaml", "\n".join(lines) + "\n"))
    assert [e.line for e in exceptions] == [3 + 3 * i for i in range(len(flagged))]
    verdict = decide(leaky, exceptions, exceptions_file=tmp_path / "accept.yaml")
    assert verdict.passed and not verdict.blocking and len(verdict.accepted) == len(flagged)
    line = 3 + 3 * sorted(flagged).index(("longest option", "longest"))
    longest = next(f for f in verdict.accepted if (f.solver, f.task) == ("longest option", "longest"))
    assert longest.accepted == f"{tmp_path / 'accept.yaml'}:{line}"
    assert longest.reason == "long answers are the protocol's wording"
    # an entry without a task accepts the solver on every task; JSON (tab-indented) reads the same
    every = "".join(
        f'\t{{"solver": "{name}", "reason": "reviewed"}},\n' for name in sorted({n for n, _ in flagged})
    )
    as_json = _file(tmp_path, "accept.json", "[\n" + every.rstrip(",\n") + "\n]\n")
    assert decide(leaky, read_exceptions(as_json)).passed


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("accept:\n  - solver: longest option\n    task: longest\n", 2, "gives no reason"),
        ("accept:\n  - solver: longest option\n  - solver: x\n    reason: '  '\n", 2, "gives no reason"),
        ("accept:\n  - task: longest\n    reason: why\n", 2, "names no solver"),
        ("accept:\n  - solver: a\n    reason: b\n    items: [1]\n", 2, "unknown key 'items'"),
        ("accept:\n  - longest option\n", 2, "must be a mapping"),
        ("solvers:\n  - solver: a\n", 1, "expected one key, `accept:`"),
        ("accept: longest option\n", 1, "expected a list"),
        ("accept:\n  - solver: [a\n", 3, "not valid YAML"),
    ],
)
def test_a_malformed_exception_file_is_refused_naming_file_and_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = _file(tmp_path, "accept.yaml", text)
    with pytest.raises(DataError) as raised:
        read_exceptions(path)
    assert f"{path}:{line}: " in str(raised.value) and message in str(raised.value), str(raised.value)


def test_bad_json_names_its_line(tmp_path: Path) -> None:
    path = _file(tmp_path, "accept.json", '[\n  {"solver": "a", "reason": "b"}\n  {"solver": "c"}\n]\n')
    with pytest.raises(DataError, match=rf"{path}:3: not valid JSON"):
        read_exceptions(path)


def test_an_exception_that_matches_nothing_is_an_error_naming_its_line(leaky, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = _file(
        tmp_path,
        "accept.yaml",
        "accept:\n  - solver: longest option\n    reason: reviewed\n"
        "  - solver: roundest value\n    task: longest\n    reason: stale\n"
        "  - solver: longest option\n    task: names\n    reason: the clean task is not flagged\n",
    )
    with pytest.raises(DataError) as raised:
        decide(leaky, read_exceptions(path))
    text = str(raised.value)
    assert f"{path}:4: the exception for 'roundest value' on 'longest' matches no flagged solver" in text
    assert f"{path}:7: the exception for 'longest option' on 'names' matches no flagged solver" in text
    assert f"{path}:2:" not in text
