"""Every `expvid ...` command line in the docs names a real command and real options.

The lines are checked against the real Typer app: the Click command objects Typer builds, and Click's
own option parser, without running anything. A renamed option or a command that moved fails here with
the file, the line and the command as written. New Markdown files are picked up by glob.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer.main
from typer._click import ClickException, Command, Context
from typer.core import TyperGroup

import doc_blocks
from expvid.cli.main import app
from expvid.suites.defaults import DEFAULT_SUITE
from expvid.suites.registry import UnknownSuiteError, settings_model
from expvid.suites.settings import SettingsError, parse_pairs

ELIDED = "..."
LINES = [line for block in doc_blocks.all_blocks() for line in doc_blocks.command_lines(block)]


def problem(args: list[str], elided: bool) -> str | None:
    """Why `expvid ARGS` would be refused as usage, or None: commands, options, values, positionals."""
    command: Command = typer.main.get_command(app)
    context = Context(command, info_name="expvid")
    path = ["expvid"]
    remaining = list(args)
    while isinstance(command, TyperGroup):
        while remaining and remaining[0].startswith("-") and remaining[0] not in ("--help", "--version"):
            return f"{' '.join(path)} takes no option {remaining[0]} before its command"
        if not remaining or remaining[0] in ("--help", "--version"):
            return None
        name = remaining.pop(0)
        found = command.get_command(context, name)
        if found is None:
            return f"{' '.join(path)} has no command {name!r}"
        path.append(name)
        command = found
        context = Context(command, info_name=name, parent=context)
    if "--help" in remaining:
        return None
    parser = command.make_parser(context)
    try:
        values, extra, _order = parser.parse_args(list(remaining))
    except ClickException as error:
        return f"{' '.join(path)}: {error.format_message()}"
    extra = [word for word in extra if word != ELIDED]  # `expvid eval ... --batch`: "the rest as above"
    if extra and not context.allow_extra_args:
        return f"{' '.join(path)}: unexpected extra argument(s) {' '.join(extra)}"
    settings = next((param.name for param in command.params if "-S" in param.opts), None)
    if settings and values.get(settings):
        found = _settings_problem(str(values.get("suite") or DEFAULT_SUITE), values[settings])
        if found:
            return f"{' '.join(path)}: {found}"
    if not elided:
        for param in command.params:
            if (
                param.param_type_name == "argument"
                and param.required
                and values.get(param.name) in (None, ())
            ):
                return f"{' '.join(path)}: missing argument {param.human_readable_name}"
    return None


def _settings_problem(suite: str, pairs: list[str]) -> str | None:
    """Why `-S KEY=VALUE ...` is refused by the suite's settings model; None for a suite not installed."""
    try:
        model = settings_model(suite)
    except UnknownSuiteError:  # an outside suite the page installs first (docs/write-a-suite.md)
        return None
    try:
        model.parse(parse_pairs(pairs), suite=suite)
    except SettingsError as error:
        return f"-S: {error}"
    return None


def test_the_docs_have_commands_to_check() -> None:
    files = {line.block.path.name for line in LINES}
    assert {"README.md", "build.md", "suites.md", "hub.md"} <= files
    assert len(LINES) > 100


@pytest.mark.parametrize("line", LINES, ids=[line.where for line in LINES])
def test_every_expvid_command_in_the_docs_parses(line: doc_blocks.CommandLine) -> None:
    found = problem(line.args, line.elided)
    assert found is None, f"{line.where}: {line.source}\n  {found}"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["eval", "--data", "d", "--model", "random", "--out", "r"], None),
        (["eval", "--data", "d", "--modle", "random"], "No such option: --modle"),
        (["evaluate", "--data", "d"], "has no command 'evaluate'"),
        (["data", "chekc", "d"], "has no command 'chekc'"),
        (["data", "check", "d", "e"], "unexpected extra argument"),
        (["data", "check"], "missing argument"),
        (["eval", "--data"], "requires an argument"),
        (["platform", "user", "add", "alice", "--role", "annotator", "--password-stdin"], None),
        (["eval", "--suite", "promqa", "--help"], None),
        (["eval", "...", "--model", "...", "--batch"], None),
        (["eval", "...", "--batchh"], "No such option: --batchh"),
        (["eval", "...", "-S", "with_asr=true", "-S", "frame_preset=claude-sonnet-4"], None),
        (["eval", "...", "-S", "with_asr=maybe"], "with_asr"),
        (["data", "check", "d", "--suite", "sfe", "-S", "langauge=both"], "langauge"),
    ],
)
def test_the_check_refuses_what_the_cli_refuses(args: list[str], expected: str | None) -> None:
    found = problem(args, elided=False)
    if expected is None:
        assert found is None
    else:
        assert found is not None and expected in found


def test_lines_are_read_as_a_shell_reads_them(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```bash\n# needs: network\n"
        "expvid eval --data d \\\n    --model random --out r   # a comment --bogus\n"
        "printf x | expvid platform import c/ && expvid platform serve 2>/dev/null\n"
        "while [ $? -eq 5 ]; do expvid eval ... --batch; done\n```\n\n"
        "```text\nexpvid not a command\n```\n\n"
        "```\n# synopsis\nexpvid view RUN [RUN ...] [--port 8765]\n```\n\n"
        "```console\n$ expvid suites list\nexpvid  ExpVid (the paper)\n```\n",
        encoding="utf-8",
    )
    blocks = doc_blocks.shell_blocks(page)
    assert [(block.line, block.needs, block.synopsis) for block in blocks] == [
        (3, "network", False),
        (15, None, True),
        (20, None, False),
    ]
    assert blocks[-1].script == "expvid suites list\n"  # the console block's output is not run
    lines = [
        (line.line, line.args, line.elided) for block in blocks for line in doc_blocks.command_lines(block)
    ]
    assert lines == [
        (5, ["eval", "--data", "d", "--model", "random", "--out", "r"], False),
        (7, ["platform", "import", "c/"], False),
        (7, ["platform", "serve"], False),
        (8, ["eval", "...", "--batch"], True),
        (17, ["view", "RUN", "RUN", "...", "--port", "8765"], True),
        (21, ["suites", "list"], False),
    ]
