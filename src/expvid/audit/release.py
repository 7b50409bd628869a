"""`audit_release`: a release on disk (or `hf:ORG/NAME`) read through the suites' registry, audited.

The audit knows a suite only through its public API: the registry builds it by name, its `load`
reads the release (media are not needed: the text-only audit reads annotations), its
`shortcut_solvers()` and `option_counts` add what the suite knows of its own format, and its prompts
under the given settings say whether the model is shown the items' transcripts
(`expvid.audit.setting`). `hf:` specs are fetched into the cache exactly as `expvid eval --data
hf:...` fetches them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from expvid.audit.engine import AuditOptions, Progress, audit_items
from expvid.audit.result import AuditReport
from expvid.audit.setting import transcript_shown
from expvid.schema import DataError
from expvid.schema.dataset import Dataset
from expvid.suites.defaults import DEFAULT_SUITE
from expvid.suites.registry import get_suite


def resolve_release(
    data: str,
    *,
    suite: str | None,
    settings: Mapping[str, Any] | None = None,
    tasks: Sequence[str] | None = None,
    cache_root: Path | None = None,
    echo: Callable[[str], None] = lambda _: None,
) -> tuple[Path, str]:
    """(local root, suite name) of `--data`: a folder, or an `hf:` spec fetched into the cache."""
    if not data.startswith("hf:"):
        root = Path(data)
        if not root.exists():
            raise DataError(f"--data {data}: no such file or directory")
        return root, suite or DEFAULT_SUITE
    from expvid.hub.dataspec import resolve_data
    from expvid.media.cache import default_cache_dir

    cache_root = cache_root or default_cache_dir()
    return resolve_data(data, suite=suite, tasks=tasks, settings=settings, cache_root=cache_root, echo=echo)


def load_release(
    root: Path, suite_name: str, settings: Mapping[str, Any] | None = None, tasks: Sequence[str] | None = None
) -> tuple[Any, Dataset]:
    """(the suite, its dataset) for a release root; `DataError` for a release that cannot be read."""
    try:
        suite = get_suite(suite_name, settings)
    except (TypeError, ValueError) as error:
        raise DataError(str(error)) from None
    dataset = suite.load(root, tasks=tasks, check_media=False)
    if dataset.unreadable:
        listing = "; ".join(str(problem) for problem in dataset.unreadable[:3])
        raise DataError(f"cannot read the release at {root}: {listing}")
    return suite, dataset


def audit_release(
    data: str | Path,
    *,
    suite: str | None = None,
    settings: Mapping[str, Any] | None = None,
    tasks: Sequence[str] | None = None,
    runs: Sequence[Any] = (),
    options: AuditOptions | None = None,
    progress: Progress | None = None,
    cache_root: Path | None = None,
    echo: Callable[[str], None] = lambda _: None,
    source: str | None = None,
    loaded: tuple[Any, Dataset] | None = None,
) -> AuditReport:
    """Audit the release at `data` (a folder in the suite's layout, or `hf:ORG/NAME[@REV]`).

    `source`: what the report names as its data (default: `data`); `loaded`: the (suite, dataset)
    that `load_release` already read from `data` (the CLI reads it before its progress display).
    `options.transcript_shown` None (the default) is decided from the suite under `settings`."""
    if loaded is None:
        root, suite_name = resolve_release(
            str(data), suite=suite, settings=settings, tasks=tasks, cache_root=cache_root, echo=echo
        )
        loaded = load_release(root, suite_name, settings, tasks)
    suite_object, dataset = loaded
    declared = getattr(suite_object, "option_counts", None)
    base = options or AuditOptions()
    shown, decided = (
        transcript_shown(suite_object, dataset.items)
        if base.transcript_shown is None
        else (base.transcript_shown, "given by the caller")
    )
    options = replace(  # the caller's options are left as they were
        base,
        extra_solvers=[*base.extra_solvers, *_suite_solvers(suite_object)],
        option_counts=base.option_counts or (dict(declared) if isinstance(declared, Mapping) else {}),
        transcript_shown=shown,
        transcript_decided=decided,
    )
    ids = {item.id for item in dataset.items}
    invalid = [
        (
            record.source_id if record.source_id and record.source_id not in ids else record.id,
            record.task or "?",
            str(record.problem),
        )
        for record in dataset.invalid
    ]
    return audit_items(
        dataset.items,
        options=options,
        runs=runs,
        progress=progress,
        problems=[str(problem) for problem in dataset.problems],
        invalid=invalid,
        suite=dataset.suite,
        data=source or str(data),
        fingerprint=dataset.annotations_fingerprint(),
    )


def _suite_solvers(suite: Any) -> list[Any]:
    hook = getattr(suite, "shortcut_solvers", None)
    return list(hook()) if callable(hook) else []
