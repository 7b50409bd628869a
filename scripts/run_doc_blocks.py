"""Run every shell block of the documentation that needs nothing from outside the machine.

    .venv/bin/python scripts/run_doc_blocks.py              # all of them (minutes: see CONTRIBUTING.md)
    .venv/bin/python scripts/run_doc_blocks.py README.md    # the blocks of the files named
    .venv/bin/python scripts/run_doc_blocks.py --list       # what would run and what is skipped, and why
    .venv/bin/python scripts/run_doc_blocks.py --needs      # each `# needs:` block's commands without it

Why: `tests/docs/test_docs_commands_parse.py` checks that every `expvid` line names real commands and
options, but only running a block shows that it works as written. This is outside the test suite
because it takes minutes (the blocks generate samples and evaluate on them).

Each Markdown file's blocks run in order, with `bash -e -o pipefail`, in one fresh directory that
holds a link to each top-level entry of the checkout and a copy of docs/ (so `docs/eval-sets/...`
resolves as from the repository root while everything the blocks write stays in the fresh directory), with this Python's
`expvid` first on PATH and an empty frame cache. A block whose first line is `# needs: WHAT` or
`# synopsis` is skipped, its reason printed. Exit status 1 if any block failed.

`--needs` checks the other promise of those blocks: run without what they need (API keys removed from
the environment; no server, GPU, database or dataset here), each of their `expvid` commands must fail
in one line, with no traceback, within a minute. Commands with `...` are not run (they are not
complete); a command that succeeds (RAN) or takes longer (SLOW) is reported, for a reader to judge:
it may not need what its block says (a sample that the block makes first), or serve until stopped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import doc_blocks  # tests/doc_blocks.py: the block grammar the parse test shares

ROOT = doc_blocks.ROOT
NOT_LINKED = {".git", "__pycache__"}
# Copied, not linked: commands write beside files they read there (`expvid eval-set CONFIG` puts its
# runs relative to the config in docs/eval-sets/), and nothing a block does may land in the checkout.
COPIED = {"docs"}
TAIL_LINES = 15
KEYS = (
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "HF_TOKEN",
)
NEEDS_TIMEOUT = 60


def workspace(directory: Path) -> None:
    """Make `directory` look like the repository root: a link to each top-level entry (docs/ a copy)."""
    for entry in ROOT.iterdir():
        if entry.name in COPIED:
            shutil.copytree(entry, directory / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.name not in NOT_LINKED:
            (directory / entry.name).symlink_to(entry)


def environment(directory: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["EXPVID_CACHE_DIR"] = str(directory / ".expvid-cache")  # a newcomer's cache is empty
    env["COLUMNS"] = "120"
    return env


def run_block(block: doc_blocks.Block, directory: Path, timeout: float) -> tuple[bool, float, str]:
    """(passed, seconds, output) of one block run with bash in `directory`."""
    started = time.perf_counter()
    try:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.script],
            cwd=directory,
            env=environment(directory),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or "") + (expired.stderr or "")
        output = output if isinstance(output, str) else output.decode(errors="replace")
        return False, time.perf_counter() - started, f"{output}\n(timed out after {timeout:.0f} s)"
    return (
        done.returncode == 0,
        time.perf_counter() - started,
        done.stdout + done.stderr + (f"\n(exit status {done.returncode})" if done.returncode else ""),
    )


def check_needs(files: list[Path]) -> int:
    """Each `# needs:` block's complete `expvid` commands, run without what they need: one-line failures."""
    bad: list[str] = []
    for path in files:
        for block in doc_blocks.shell_blocks(path):
            if not block.needs:
                continue
            for command in doc_blocks.command_lines(block):
                if command.elided or "--help" in command.args or not command.source.startswith("expvid "):
                    continue  # incomplete, help, or `.venv/bin/expvid` of a set-up the block makes
                with tempfile.TemporaryDirectory(prefix="expvid-doc-needs-") as scratch:
                    workspace(Path(scratch))
                    env = {key: value for key, value in environment(Path(scratch)).items() if key not in KEYS}
                    try:
                        done = subprocess.run(
                            ["bash", "-c", command.source],
                            cwd=scratch,
                            env=env,
                            stdin=subprocess.DEVNULL,
                            capture_output=True,
                            text=True,
                            timeout=NEEDS_TIMEOUT,
                        )
                    except subprocess.TimeoutExpired:
                        print(
                            f"SLOW {command.where}  {command.source}  (still running after {NEEDS_TIMEOUT} s)"
                        )
                        continue
                output = done.stdout + done.stderr
                lines = [line for line in output.splitlines() if line.strip()]
                last = lines[-1] if lines else "(no output)"
                one_line = last.lower().startswith("error") and "Traceback" not in output
                verdict = "RAN " if done.returncode == 0 else ("OK  " if one_line else "BAD ")
                print(f"{verdict} {command.where}  {command.source}\n     -> {last}", flush=True)
                if verdict == "BAD ":
                    bad.append(command.where)
    if bad:
        print("not a one-line failure: " + " ".join(bad))
    return 1 if bad else 0


def run_file(
    blocks: list[doc_blocks.Block],
    directory: Path,
    options: argparse.Namespace,
    counts: dict[str, int],
    failed: list[str],
) -> None:
    """Run one Markdown file's blocks in order in `directory`, counting and printing each outcome."""
    for block in blocks:
        reason = skip_reason(block)
        if reason is not None:
            counts["skipped"] += 1
            print(f"SKIP {block.where}  ({reason})", flush=True)
            continue
        if options.list:
            counts["passed"] += 1
            print(f"RUN  {block.where}", flush=True)
            continue
        passed, seconds, output = run_block(block, directory, options.timeout)
        counts["passed" if passed else "failed"] += 1
        print(f"{'PASS' if passed else 'FAIL'} {block.where}  {seconds:.1f} s", flush=True)
        if not passed:
            failed.append(block.where)
            for line in output.rstrip().splitlines()[-TAIL_LINES:]:
                print(f"     | {line}", flush=True)


def skip_reason(block: doc_blocks.Block) -> str | None:
    if block.needs:
        return f"needs: {block.needs}"
    if block.synopsis:
        return "synopsis"
    return None


def selected_files(names: list[str]) -> list[Path]:
    files = doc_blocks.markdown_files()
    if not names:
        return files
    wanted = {(Path.cwd() / name).resolve() for name in names}
    unknown = wanted - {path.resolve() for path in files}
    if unknown:
        raise SystemExit(
            f"not a documentation file with shell blocks: {', '.join(map(str, sorted(unknown)))}"
        )
    return [path for path in files if path.resolve() in wanted]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files to run (default: all of them)")
    parser.add_argument("--list", action="store_true", help="list the blocks and what each needs; run none")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per block (default 600)")
    parser.add_argument("--needs", action="store_true", help="run the `# needs:` blocks' commands without it")
    parser.add_argument("--keep", action="store_true", help="keep each file's directory and print where")
    options = parser.parse_args()
    if options.needs:
        return check_needs(selected_files(options.files))

    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failed: list[str] = []
    total_started = time.perf_counter()
    for path in selected_files(options.files):
        blocks = doc_blocks.shell_blocks(path)
        if not blocks:
            continue
        directory = Path(tempfile.mkdtemp(prefix="expvid-doc-blocks-"))
        workspace(directory)
        try:
            run_file(blocks, directory, options, counts, failed)
        finally:  # the links are removed, never followed
            if options.keep:
                print(f"     kept {directory}", flush=True)
            else:
                shutil.rmtree(directory, ignore_errors=True)
    runnable = "would run" if options.list else "passed"
    print(
        f"{counts['passed']} {runnable}, {counts['failed']} failed, {counts['skipped']} skipped;"
        f" {time.perf_counter() - total_started:.0f} s",
        flush=True,
    )
    if failed:
        print("failed: " + " ".join(failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
