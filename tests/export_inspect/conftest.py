"""One virtual environment with Inspect AI from PyPI, shared by the Inspect tests of a session.

The environment sees the developer's expvid (and everything installed beside it, pip included) through a `.pth`
file, so pip installs only what Inspect adds; Inspect's own CLI (`inspect eval`) then runs exported
task packages in it, and expvid's `score --from inspect` reads the logs with Inspect's reader there.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

#: Pinned: the log format and the task API are checked against this release.
INSPECT_AI = "inspect-ai==0.3.285"


@pytest.fixture(scope="session")
def inspect_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = tmp_path_factory.mktemp("inspect") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=300)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_expvid_dev.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check", INSPECT_AI],
        capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return python
