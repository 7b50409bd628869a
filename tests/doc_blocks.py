"""The shell blocks of the documentation, and the `expvid` command lines in them.

Why: a newcomer copies these blocks into a terminal. `tests/docs/test_docs_commands_parse.py` checks
that every `expvid ...` line in them names real commands and options; `scripts/run_doc_blocks.py` runs
the blocks that need nothing from outside the machine, end to end.

The conventions the documentation follows (CONTRIBUTING.md, "Shell blocks in the docs"):

- a block fenced as ```bash, ```sh, ```shell or ```console, or an unlabelled block with an `expvid`
  command, is a shell block; ```text is a picture or a listing and is left alone;
- a shell block runs as written from the repository root, each Markdown file's blocks in order in one
  fresh directory (a later block may use what an earlier one wrote);
- a first line `# needs: WHAT` says it needs something the machine may not have (`network`, `gpu`, a
  provider, an API key's variable, a database, a dataset): it is not run, and without WHAT its commands
  fail in one line saying so;
- a first line `# synopsis` marks a usage summary (CAPITALS are placeholders): checked, not run;
- in any block, `[...]` is an optional part and `...` stands for "the rest as above" (or a value
  left to you): the parse check reads both, so such a block is a synopsis or needs something.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = {"bash", "sh", "shell", "console", "zsh"}
SKIPPED_DIRS = {"venv", "build", "dist", "node_modules", "__pycache__"}
_FENCE = re.compile(r"^(?P<indent>\s*)(?P<ticks>`{3,})(?P<info>[^`]*)$")
#: A line that installs packages: such a block needs the package index, whether or not it says so.
_INSTALLS = re.compile(r"\bpip install\b")
_NEEDS = re.compile(r"^#\s*needs:\s*(?P<what>.+)$")
_SYNOPSIS = re.compile(r"^#\s*synopsis\b")
_SEPARATORS = {"|", "||", "&&", ";", "&", "(", ")"}
_SHELL_KEYWORDS = {"do", "then", "else", "time", "!", "while", "until", "if"}
_REDIRECTIONS = {">", ">>", "<", ">&", "<&", "&>"}


@dataclass(frozen=True)
class Block:
    """One fenced shell block: where it is, its text, and what its first line says it needs."""

    path: Path
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    needs: str | None
    synopsis: bool

    @property
    def where(self) -> str:
        return f"{_shown(self.path)}:{self.line}"

    @property
    def script(self) -> str:
        """What a shell runs: a console block's `$ ` lines (and their continuations), else the text."""
        if self.language != "console":
            return self.text
        kept: list[str] = []
        continuing = False
        for line in self.text.splitlines():
            if line.startswith("$ ") or continuing:
                kept.append(line[2:] if line.startswith("$ ") and not continuing else line)
                continuing = line.endswith("\\")
        return "\n".join(kept) + "\n"


@dataclass(frozen=True)
class CommandLine:
    """One `expvid ...` command of a block: its arguments after `expvid`, and where it starts."""

    block: Block
    line: int  # 1-based line in the Markdown file
    source: str  # the command as written (continuations joined)
    args: list[str]  # after `expvid`; the brackets of optional parts (`[--dry-run]`) removed
    elided: bool  # `...` ("as above") or `[optional parts]`: not a complete command to run

    @property
    def where(self) -> str:
        return f"{_shown(self.block.path)}:{self.line}"


def _shown(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def markdown_files(root: Path = ROOT) -> list[Path]:
    """Every Markdown file of the checkout that documents commands, new ones included (by glob)."""
    found = []
    for path in sorted(root.rglob("*.md")):
        parts = path.relative_to(root).parts
        if any(part.startswith(".") or part in SKIPPED_DIRS for part in parts[:-1]):
            continue
        if parts[0] in ("tests", "benchmarks"):  # fixtures and notes, not documentation
            continue
        found.append(path)
    return found


def shell_blocks(path: Path) -> list[Block]:
    """The shell blocks of one Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    position = 0
    while position < len(lines):
        opening = _FENCE.match(lines[position])
        if not opening:
            position += 1
            continue
        start = position
        ticks = opening["ticks"]
        body: list[str] = []
        position += 1
        while position < len(lines) and not lines[position].strip().startswith(ticks):
            body.append(lines[position][len(opening["indent"]) :])
            position += 1
        position += 1  # the closing fence
        language = opening["info"].strip().split(" ")[0].lower()
        is_shell = language in SHELL_LANGUAGES or (
            language == "" and any(_strip_prompt(line).startswith("expvid ") for line in body)
        )
        if not is_shell:
            continue
        first = body[0].strip() if body else ""
        needs = _NEEDS.match(first)
        what = needs["what"].strip() if needs else None
        if what is None and any(_INSTALLS.search(line) for line in body):
            # README's opening commands must stay exactly two lines: an install says what it needs itself
            what = "network (PyPI: it installs packages)"
        blocks.append(
            Block(
                path=path,
                line=start + 1,
                language=language,
                text="\n".join(body) + "\n",
                needs=what,
                synopsis=bool(_SYNOPSIS.match(first)),
            )
        )
    return blocks


def all_blocks(root: Path = ROOT) -> list[Block]:
    return [block for path in markdown_files(root) for block in shell_blocks(path)]


def _strip_prompt(line: str) -> str:
    stripped = line.strip()
    return stripped[2:] if stripped.startswith("$ ") else stripped


def _logical_lines(block: Block) -> Iterator[tuple[int, str]]:
    """(file line, text) of each command, backslash continuations joined; a console block's output skipped."""
    pending = ""
    pending_line = 0
    for offset, raw in enumerate(block.text.splitlines()):
        if block.language == "console" and not pending and not raw.startswith("$ "):
            continue  # output printed by the command above
        line = _strip_prompt(raw) if not pending else raw.strip()
        if not pending:
            pending_line = block.line + 1 + offset
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        yield pending_line, pending + line
        pending = ""
    if pending:
        yield pending_line, pending


def _is_expvid(word: str) -> bool:
    return word == "expvid" or word.endswith("/expvid")


def command_lines(block: Block) -> list[CommandLine]:
    """Every `expvid` command in a block: after pipes, `&&`, `;` and shell keywords too."""
    found = []
    for line, text in _logical_lines(block):
        lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            words = list(lexer)
        except ValueError as error:  # an unclosed quote: report it as the command's problem
            words = ["expvid", f"<unparseable shell: {error}>"] if "expvid" in text else []
        segment: list[str] = []
        redirected = False
        for word in [*words, ";"]:
            if redirected:  # the file a redirection names is not an argument
                redirected = False
                continue
            if word in _REDIRECTIONS:
                if segment and segment[-1].isdigit():  # 2> file: the 2 belongs to the redirection
                    segment.pop()
                redirected = True
                continue
            if word not in _SEPARATORS:
                segment.append(word)
                continue
            while segment and segment[0] in _SHELL_KEYWORDS:
                segment.pop(0)
            if segment and _is_expvid(segment[0]):
                found.append(_command(block, line, segment))
            segment = []
    return found


def _command(block: Block, line: int, words: list[str]) -> CommandLine:
    args = []
    elided = False
    for word in words[1:]:
        elided = elided or word.strip("[]") == "..." or word.startswith("[") or word.endswith("]")
        word = word.strip("[]")  # `[--dry-run]`: an optional part, checked like the rest
        if word:
            args.append(word)
    return CommandLine(block=block, line=line, source=shlex.join(words), args=args, elided=elided)
