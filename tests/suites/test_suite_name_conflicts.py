"""Two packages claiming one suite name: the built-in keeps its name (with a warning saying how to run
the other), two outside packages are refused by name, never settled by install order.

The packages are real installed distributions as `importlib.metadata` finds them: a `*.dist-info`
folder (METADATA, entry_points.txt) beside the package's module on `sys.path`, what pip writes.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from expvid.suites import registry
from expvid.suites.mmvu import MMVUSuite


def _install(site: Path, distribution: str, module: str, suites: dict[str, str]) -> None:
    """A distribution `distribution` 0.1 whose module `module` defines the suite classes `suites` (name -> class)."""
    info = site / f"{distribution.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n")
    points = "".join(f"{name} = {module}:{cls}\n" for name, cls in suites.items())
    (info / "entry_points.txt").write_text(f"[expvid.suites]\n{points}")
    classes = "".join(
        f"class {cls}(MMVUSuite):\n    name = {name!r}\n    title = 'from {distribution}'\n\n"
        for name, cls in suites.items()
    )
    (site / f"{module}.py").write_text(f"from expvid.suites.mmvu import MMVUSuite\n\n{classes}")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    registry.declarations.cache_clear()
    yield folder
    registry.declarations.cache_clear()


def test_a_package_cannot_replace_a_built_in_suite(site: Path, caplog: pytest.LogCaptureFixture) -> None:
    _install(site, "mmvu-fork", "mmvu_fork", {"mmvu": "Fork", "mmvu_fork": "Renamed"})
    with caplog.at_level(logging.WARNING, logger="expvid.suites.registry"):
        assert registry.suite_class("mmvu") is MMVUSuite
    (message,) = [record.getMessage() for record in caplog.records]
    assert message == (
        "warning: mmvu-fork 0.1 (mmvu_fork:Fork) declares the suite name 'mmvu', which is expvid's built-in "
        "suite (expvid.suites.mmvu.suite:MMVUSuite): the built-in is used. A package cannot replace a built-in "
        "suite; to run its suite, give its entry point in the group 'expvid.suites' another name."
    )
    assert registry.suite_class("mmvu_fork").title == "from mmvu-fork"  # its other name is its own


def test_two_outside_packages_with_one_name_are_refused_by_name(site: Path) -> None:
    _install(site, "tiny-a", "tiny_a", {"tinyqa": "A"})
    _install(site, "tiny-b", "tiny_b", {"tinyqa": "B"})
    assert "tinyqa" in registry.suite_names()
    with pytest.raises(registry.UnknownSuiteError) as refused:
        registry.suite_class("tinyqa")
    assert str(refused.value) == (
        "suite 'tinyqa' is declared by 2 installed packages: tiny-a 0.1 (tiny_a:A); tiny-b 0.1 (tiny_b:B); "
        "which one to use is not decided by install order: uninstall one, or give one's entry point in "
        "'expvid.suites' another name"
    )


def test_the_command_line_says_which_suite_it_uses(site: Path, tmp_path: Path) -> None:
    _install(site, "mmvu-fork", "mmvu_fork", {"mmvu": "Fork"})
    _install(site, "tiny-a", "tiny_a", {"tinyqa": "A"})
    _install(site, "tiny-b", "tiny_b", {"tinyqa": "B"})
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "COLUMNS": "40"}
    listed = subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", "suites", "list"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "mmvu  MMVU: expert-level" in listed.stdout and "from mmvu-fork" not in listed.stdout
    assert "declares the suite name 'mmvu', which is expvid's built-in suite" in listed.stderr
    assert "tinyqa  (cannot be loaded: suite 'tinyqa' is declared by 2 installed packages" in listed.stdout
    shown = subprocess.run(
        [sys.executable, "-m", "expvid.cli.main", "suites", "show", "tinyqa"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert shown.returncode == 2 and "tiny-a 0.1 (tiny_a:A); tiny-b 0.1 (tiny_b:B)" in shown.stderr
