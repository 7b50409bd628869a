"""`--data hf:ORG/NAME[@REV]`: fetch a Hub release into the cache, then evaluate the local copy.

The copy lives at `<cache>/datasets/<org>--<name>/<revision>/`, one folder per requested revision, so
runs pinned to different revisions never overwrite each other's files and a second run reuses the
first one's download (only the newly selected tasks' media are fetched). A repo that is not one of
the suites' releases (a benchmark exported with `expvid platform export --format hf`, a fork) is read
with the suite given by `--suite`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from expvid.hub.fetch import Echo, FetchError, FetchRequest, fetch_release
from expvid.hub.sources import parse_hub_spec
from expvid.schema import DataError
from expvid.suites.defaults import DEFAULT_SUITE


def hub_cache_dir(cache_root: Path, repo_id: str, revision: str) -> Path:
    safe_revision = re.sub(r"[^A-Za-z0-9._-]", "_", revision)
    return cache_root / "datasets" / repo_id.replace("/", "--") / safe_revision


def resolve_data(
    data: str,
    *,
    suite: str | None,
    tasks: Sequence[str] | None,
    settings: Mapping[str, Any] | None,
    cache_root: Path,
    echo: Echo,
) -> tuple[Path, str]:
    """(local dataset root, suite) for a `--data` value; `hf:` specs are fetched first. `suite` None:
    `--suite` was not given, so a suite's release names its own suite (others get the default)."""
    try:
        spec = parse_hub_spec(data)
    except ValueError as error:
        raise DataError(str(error)) from None
    if spec is None:
        return Path(data), suite or DEFAULT_SUITE
    if spec.suite is not None and spec.suite != suite:
        if suite is not None:
            raise DataError(f"{spec.repo_id} is the {spec.suite} release; use --suite {spec.suite}")
        suite = spec.suite
    suite = suite or DEFAULT_SUITE
    target = hub_cache_dir(cache_root, spec.repo_id, spec.revision)
    echo(f"fetching {spec.repo_id}@{spec.revision} into {target}")
    try:
        outcome = fetch_release(
            FetchRequest(
                suite=suite,
                out=target,
                repo_id=spec.repo_id,
                revision=spec.revision,
                tasks=list(tasks) if tasks else None,
                settings=settings,
            ),
            echo=echo,
        )
    except FetchError as error:
        raise DataError(f"--data {data}: {error}") from None
    if not outcome.complete:
        shown = "\n  ".join(outcome.problems[:10])
        echo(
            f"warning: {data} is incomplete ({len(outcome.problems)} problem(s)); items without their media "
            f"will be recorded as media failures:\n  {shown}"
        )
    return target, suite
