"""`expvid` starts without importing what the command at hand does not use.

Checked by what a fresh interpreter has in `sys.modules`, not by timing (timings belong in
benchmarks/cli_startup.py): importing the CLI, printing help and running `expvid frames` must not
load torch, transformers, matplotlib, the web stack or the evaluation code.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.lazy import build_command
from expvid.cli.main import COMMANDS, app

#: Never needed to start the CLI, print help or sample frames.
HEAVY = [
    "torch",
    "transformers",
    "sentence_transformers",
    "matplotlib",
    "fastapi",
    "starlette",
    "sqlalchemy",
    "alembic",
    "uvicorn",
    "jinja2",
    "httpx2",
    "httpx",
    "openai",
    "anthropic",
    "pypdf",
    "pysbd",
]
#: Neither listing commands nor parsing a command's parameters needs pydantic (typer 0.29 does, which
#: is why pyproject keeps typer below it); nor does the help layout need rich's markdown renderer.
TYPER_PARAMETERS = ["pydantic", "rich.markdown", "typer.rich_utils"]
#: Needed by `expvid frames` to decode, but not to start or print help.
MEDIA = ["numpy", "av", "PIL"]


def _modules_after(code: str) -> set[str]:
    """Top-level module names, and expvid, rich and typer submodules, a fresh interpreter holds after
    running `code`."""
    script = textwrap.dedent(code) + textwrap.dedent(
        """
        import json, sys
        names = {name.split(".")[0] for name in sys.modules} | {
            n for n in sys.modules if n.startswith(("expvid.", "rich.", "typer."))
        }
        print("MODULES=" + json.dumps(sorted(names)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("MODULES="))
    return set(json.loads(line.removeprefix("MODULES=")))


def _run_cli(*args: str) -> str:
    return f"""
        from expvid.cli.main import app
        try:
            app({list(args)!r}, prog_name="expvid")
        except SystemExit as stop:
            assert stop.code in (0, None), stop.code
        """


def test_importing_the_cli_loads_no_heavy_module() -> None:
    loaded = _modules_after("import expvid.cli.main")
    unwanted = {*HEAVY, *MEDIA, *TYPER_PARAMETERS}
    assert not loaded & unwanted, sorted(loaded & unwanted)
    assert {name for name in loaded if name.startswith("expvid.")} == {
        "expvid.cli",
        "expvid.cli.main",
        "expvid.cli.lazy",
    }


def test_top_level_help_loads_no_command() -> None:
    loaded = _modules_after(_run_cli("--help"))
    unwanted = {*HEAVY, *MEDIA, *TYPER_PARAMETERS}
    assert not loaded & unwanted, sorted(loaded & unwanted)
    assert {name for name in loaded if name.startswith("expvid.")} == {
        "expvid.cli",
        "expvid.cli.main",
        "expvid.cli.lazy",
    }


@pytest.mark.parametrize(
    "args",
    [["frames", "--help"], ["eval", "--help"], ["data", "--help"], ["platform", "user", "--help"]],
)
def test_a_commands_help_loads_only_that_command(args: list[str]) -> None:
    loaded = _modules_after(_run_cli(*args))
    assert not loaded & {*HEAVY, *MEDIA}, sorted(loaded & {*HEAVY, *MEDIA})
    if args[0] in ("frames", "eval"):  # the commands `expvid` must start fast for
        assert not loaded & set(TYPER_PARAMETERS), sorted(loaded & set(TYPER_PARAMETERS))
    commands = {name for name in loaded if name.startswith(("expvid.cli.", "expvid.commands"))} - {
        "expvid.cli.main",
        "expvid.cli.lazy",
        "expvid.cli.suite_flags",  # `-S` and the old per-suite flags: Typer only
        "expvid.cli.common_options",  # `--quiet`, `--tasks` as several commands declare them: Typer only
        "expvid.commands",
        "expvid.commands.endpoints",  # the endpoint options eval and build share: Typer only
    }
    assert commands <= {f"expvid.cli.{args[0]}", "expvid.commands.errors"}, commands
    if args[0] == "eval":  # no suite, no settings model, no run code: just the options
        assert {name for name in loaded if name.startswith("expvid.")} <= {
            "expvid.cli", "expvid.cli.main", "expvid.cli.lazy", "expvid.cli.eval", "expvid.cli.suite_flags",
            "expvid.cli.common_options",
            "expvid.commands", "expvid.commands.endpoints",
            "expvid.suites", "expvid.suites.defaults",
        }  # fmt: skip


def test_sampling_frames_loads_only_the_media_code(tmp_path: Path) -> None:
    from expvid.media.synth import scene_frame, write_video

    video = tmp_path / "clip.mp4"
    write_video(video, [scene_frame(i, 64, 48) for i in range(12)], fps=12.0)
    loaded = _modules_after(_run_cli("frames", str(video), "--num", "3", "--no-cache"))
    assert set(MEDIA) <= loaded  # it did decode
    assert not loaded & {*HEAVY, *TYPER_PARAMETERS}, sorted(loaded & {*HEAVY, *TYPER_PARAMETERS})
    expvid = {name for name in loaded if name.startswith("expvid.")}
    assert not any(
        name.startswith(("expvid.schema", "expvid.run", "expvid.scoring", "expvid.models")) for name in expvid
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_listed_help_is_the_commands_own(name: str) -> None:
    """The one-line help in the lazy table must say what the command itself says."""
    command = build_command(name, COMMANDS[name].load())
    assert command.help is not None
    assert COMMANDS[name].help == command.help.strip().splitlines()[0]
    result = CliRunner().invoke(app, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_top_level_help_lists_every_command() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    listing = " ".join(result.output.split())  # help text wraps at the terminal's width; compare words
    for name, lazy in COMMANDS.items():
        assert f"{name} {lazy.help}" in listing


def test_unknown_commands_are_refused_with_a_suggestion() -> None:
    result = CliRunner().invoke(app, ["fram"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "No such command 'fram'. Did you mean 'frames'?" in result.output
    result = CliRunner().invoke(app, ["xyzzy"], env={"COLUMNS": "200"})
    assert result.exit_code == 2 and "No such command 'xyzzy'." in result.output


def test_the_media_package_exports_lazily() -> None:
    import expvid.media as media

    assert set(media.__all__) == set(media._EXPORTS)
    for name in media.__all__:
        assert getattr(media, name) is not None
    loaded = _modules_after("import expvid.media; from expvid.media import MediaError")
    assert not loaded & {*MEDIA, "pydantic", "pysbd"}


def test_version_says_the_installed_version_and_loads_no_command() -> None:
    import tomllib
    from importlib.metadata import version

    import expvid

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    expected = pyproject["project"]["version"]
    assert version("expvid") == expvid.__version__ == expected  # the three places agree
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"expvid {expected}\n"
    assert "--version" in CliRunner().invoke(app, ["--help"]).output
    loaded = _modules_after(_run_cli("--version"))
    assert not loaded & {*HEAVY, *MEDIA, *TYPER_PARAMETERS}, sorted(
        loaded & {*HEAVY, *MEDIA, *TYPER_PARAMETERS}
    )
    assert {name for name in loaded if name.startswith("expvid.")} == {
        "expvid.cli",
        "expvid.cli.main",
        "expvid.cli.lazy",
    }
