"""The one place suites are found by name: Python entry points in the group `expvid.suites`.

Every suite, the five that ship with expvid included, is an entry point `NAME = "module:Class"` in
a package's metadata (expvid's own are in its pyproject.toml), so a package installed beside expvid
adds a suite without touching expvid:

    [project.entry-points."expvid.suites"]
    tinyqa = "tinyqa.suite:TinyQASuite"

Nothing else in expvid names a suite: the CLI's choices, the reports, the viewer, the Hub fetch,
`data check` and `sample make` ask the registry for the suite and then ask the suite. Entry points
are read once per process and only when a suite is needed (never to print help).

`get_suite(name, settings)` builds a suite with its settings validated by the suite's own model
(`expvid.suites.settings`); `register_suite` adds one in-process (tests, notebooks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from expvid.suites.defaults import DEFAULT_SUITE, ENTRY_POINT_GROUP
from expvid.suites.protocol import EvalSuite
from expvid.suites.settings import SuiteSettings

__all__ = [
    "DEFAULT_SUITE",
    "ENTRY_POINT_GROUP",
    "UnknownSuiteError",
    "get_suite",
    "register_suite",
    "settings_model",
    "suite_class",
    "suite_for_hub_repo",
    "suite_names",
]

_REGISTERED: dict[str, Any] = {}


class UnknownSuiteError(ValueError):
    """No installed suite has this name."""


@cache
def _entry_points() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)  # the first package to claim a name keeps it
    return found


def suite_names() -> list[str]:
    """Installed suites: the default first, then by name."""
    names = set(_entry_points()) | set(_REGISTERED)
    return sorted(names, key=lambda name: (name != DEFAULT_SUITE, name))


def register_suite(name: str, factory: Callable[..., EvalSuite] | type) -> None:
    """Add (or replace) a suite in this process: a class, or a callable taking the settings."""
    _REGISTERED[name] = factory


def suite_class(name: str) -> Any:
    """The suite's class (or factory) without building it; `UnknownSuiteError` for an unknown name."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    point = _entry_points().get(name)
    if point is None:
        installed = ", ".join(suite_names()) or "none"
        raise UnknownSuiteError(
            f"unknown suite {name!r}; installed suites: {installed} "
            f"(a package adds one under the entry-point group {ENTRY_POINT_GROUP!r})"
        )
    try:
        return point.load()
    except Exception as error:  # a broken third-party package must not look like a missing suite
        raise UnknownSuiteError(
            f"suite {name!r} could not be loaded from {point.value!r}: {type(error).__name__}: {error}"
        ) from error


def settings_model(name: str) -> type[SuiteSettings]:
    """The suite's settings model (the base model, with no settings, when it declares none)."""
    model = getattr(suite_class(name), "Settings", SuiteSettings)
    return model if isinstance(model, type) and issubclass(model, SuiteSettings) else SuiteSettings


def get_suite(name: str, settings: SuiteSettings | Mapping[str, Any] | None = None) -> EvalSuite:
    """A fresh suite with its settings validated (`SettingsError` naming a bad key)."""
    factory = suite_class(name)
    suite: EvalSuite = factory(settings)
    return suite


def suite_for_hub_repo(repo_id: str) -> str | None:
    """The suite whose published release is the Hub repo `repo_id` (case-insensitive), if any."""
    wanted = repo_id.lower()
    for name in suite_names():
        try:
            repo = getattr(suite_class(name), "hub_repo", None)
        except UnknownSuiteError:
            continue
        if isinstance(repo, str) and repo.lower() == wanted:
            return name
    return None
