"""A fresh virtual environment that sees the developer's expvid, with outside packages pip-installed
into it: how the tests try a plug-in (a suite, a recipe) exactly as a user installs one."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


def venv_with(root: Path, packages: list[Path]) -> Path:
    """The Python of `root/venv` with `packages` (source folders) pip-installed from copies under
    `root` (a build never writes into the checkout). The new environment sees this test run's
    environment through a `.pth` file (`site.addsitedir`), so nothing comes from a registry."""
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    ours = sysconfig.get_paths()["purelib"]
    (purelib_of(python) / "_expvid_dev.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    copies = []
    for package in packages:
        copy = root / "sources" / package.name
        if package.resolve() != copy.resolve():
            shutil.copytree(
                package, copy, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
            )
        copies.append(str(copy))
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         *copies],
        capture_output=True, text=True, check=False, timeout=300, cwd=root,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    return python


def purelib_of(python: Path) -> Path:
    """Where packages are installed in the environment of `python`."""
    out = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return Path(out)
