"""One place that turns expected failures into a message and a non-zero exit code.

Exit codes of the `expvid` commands (documented in the README):

- 0: done;
- 1: a check found problems (`expvid data check`; `expvid audit --fail-on-flag` flagged a solver or an
  item), or a command-specific refusal;
- 2: bad usage, or data/configuration/media the command cannot work with (nothing more was done);
- 3: `expvid eval` finished and wrote everything, but some records scored 0 without a model answer
  (media, request or judge failures, invalid records); `--allow-failures` turns this into 0;
- 4: `expvid eval` stopped before finishing because it reached its budget (`--max-cost`,
  `--max-tokens-total`); what it got is written and scored as a partial run; the same command
  with a larger budget continues (the same budget stops again at once);
- 5: `expvid eval` stopped before finishing because requests are still waiting in a provider's
  batches (`--batch --batch-option wait=false`); the same command, later, collects them;
- 6: `expvid build` wrote its release, but the audit gate did not pass (a text-only solver beats
  chance and no `--accept-audit` exception accepts it; `expvid.construction.release_gate`);
- 130: interrupted (finished work is kept; re-run the same command to resume).

4 and 5 say "not finished" and win over 3 (failures are only final once the run has finished),
5 over 4 (re-running collects the batches whatever the budget). `--allow-failures` changes only 3.
`expvid eval-set` uses the same codes for its cells as a whole.

Messages are printed on a console that never wraps lines (`expvid.run.terminal`): a `file:line`
in a message stays one line whatever the terminal width or the path length.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.markup import escape

from expvid.run.terminal import message_console
from expvid.schema import DataError

_console = message_console(stderr=True)

EXIT_OK = 0
EXIT_PROBLEMS_FOUND = 1
EXIT_USAGE = 2
EXIT_ITEMS_FAILED = 3
EXIT_BUDGET_REACHED = 4
EXIT_BATCHES_PENDING = 5
EXIT_INTERRUPTED = 130


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Data, configuration and media problems are the user's to fix: show them, not a traceback."""
    from expvid.media.errors import MediaError
    from expvid.models.types import BackendConfigError
    from expvid.suites.registry import UnknownSuiteError
    from expvid.suites.settings import SettingsError

    try:
        yield
    except (
        DataError,
        BackendConfigError,
        MediaError,
        FileNotFoundError,
        SettingsError,
        UnknownSuiteError,
    ) as error:
        _console.print(f"[red]error:[/] {escape(str(error))}")
        raise typer.Exit(code=EXIT_USAGE) from None


def require_http_urls(flag: str, *urls: str | None) -> None:
    """Refuse a server URL without an http(s) scheme before any work (a usage error, exit 2)."""
    from expvid.run.config import url_problem

    for url in urls:
        problem = None if url is None else url_problem(url, flag)
        if problem:
            raise typer.BadParameter(problem.removeprefix(f"{flag} "), param_hint=flag)


def require_spec_urls(flag: str, *specs: str | None) -> None:
    """Refuse a malformed model spec before any work, the same way for every command that takes
    one (`eval --model/--judge`, `score --judge`, `build --llm/--vlm/--blind-llm`): e.g.
    `openai:MODEL@host:port/v1`, a server without a scheme, would send every request elsewhere."""
    from expvid.models.spec import spec_problem

    for spec in specs:
        problem = None if spec is None else spec_problem(spec)
        if problem:
            raise typer.BadParameter(problem, param_hint=flag)
