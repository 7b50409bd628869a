"""Every `tests/**/test_*.py` file is collected by the README's plain `pytest`.

pytest skips folders named `build`, `dist`, `venv`, `*.egg` and dot-folders by default
(`norecursedirs`); a test folder with such a name silently never runs in CI (this is how 119 tests in
`tests/build/` went unrun). The check compares the files the plain command collects with the files on
disk. When this session is that command (`pytest` from the repository root, no paths given), what it
collected is the answer; otherwise (a chosen file or folder) the plain command is run, collection only, in
a fresh interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from collection_record import COLLECTED_FILES

ROOT = Path(__file__).resolve().parents[1]


def _collected_by_this_session(config: pytest.Config) -> set[str] | None:
    plain = (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and Path(config.invocation_params.dir).resolve() == ROOT
    )
    return set(config.stash.get(COLLECTED_FILES, set())) if plain else None


def _collected_files() -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    files = set()
    for line in done.stdout.splitlines():
        path = line.split("::", 1)[0].strip()
        if "::" in line and path.endswith(".py"):
            files.add(Path(path).as_posix())
    return files


def test_every_test_file_on_disk_is_collected_by_plain_pytest(pytestconfig: pytest.Config) -> None:
    on_disk = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("test_*.py")
        if "__pycache__" not in path.parts
    }
    assert len(on_disk) > 100, "the test tree was not found where expected"
    collected = _collected_by_this_session(pytestconfig) or _collected_files()
    missing = sorted(on_disk - collected)
    assert not missing, f"{len(missing)} test files are never collected by `pytest`: {missing}"


def test_no_test_folder_has_a_name_pytest_skips() -> None:
    skipped_names = {"build", "dist", "venv", "CVS", "_darcs", "node_modules", "{arch}"}
    bad = [
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("*")
        if path.is_dir()
        and "__pycache__" not in path.parts
        and (path.name in skipped_names or path.name.endswith(".egg") or path.name.startswith("."))
    ]
    assert not bad, f"pytest never recurses into {bad}; rename them"
