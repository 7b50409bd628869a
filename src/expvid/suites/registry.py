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

A name claimed twice is never settled silently by install order:
- an installed package that declares a built-in suite's name does not replace it: the
  built-in is used, and a warning (once per process, on stderr) names both packages and says how to
  run the other one (give its entry point another name);
- two outside packages that declare the same name make the name unusable until one goes: using
  it is refused with a message naming both.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
#: The distribution that ships the built-in suites: its entry points win over any other package's.
BUILT_IN_DISTRIBUTION = "expvid"
_log = logging.getLogger(__name__)


class UnknownSuiteError(ValueError):
    """No installed suite has this name (or two outside packages claim it)."""


@dataclass(frozen=True)
class SuiteDeclarations:
    """The suites installed packages declare: one entry point per usable name, and the names that
    more than one package claims (`shadowed`: a built-in one, whose built-in wins; `ambiguous`:
    outside packages only, refused)."""

    points: dict[str, EntryPoint]
    shadowed: dict[str, list[EntryPoint]]
    ambiguous: dict[str, list[EntryPoint]]


def _package(point: EntryPoint) -> str:
    """The distribution declaring `point`, as pip names it ("tinyqa 0.1.0")."""
    dist = getattr(point, "dist", None)
    if dist is None:
        return "an unnamed package"
    return f"{dist.metadata['Name']} {dist.version}"


def _is_built_in(point: EntryPoint) -> bool:
    dist = getattr(point, "dist", None)
    name = str(dist.metadata["Name"]) if dist is not None else ""
    return name.lower().replace("_", "-") == BUILT_IN_DISTRIBUTION


def _described(point: EntryPoint) -> str:
    return f"{_package(point)} ({point.value})"


@cache
def declarations() -> SuiteDeclarations:
    """Every suite entry point, read once per process; conflicts settled as the module says."""
    claims: dict[str, list[EntryPoint]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        same = [
            p for p in claims.get(point.name, []) if (_package(p), p.value) == (_package(point), point.value)
        ]
        if not same:  # the same package seen twice on the path is one claim
            claims.setdefault(point.name, []).append(point)
    points: dict[str, EntryPoint] = {}
    shadowed: dict[str, list[EntryPoint]] = {}
    ambiguous: dict[str, list[EntryPoint]] = {}
    for name, claimed in claims.items():
        claimed.sort(key=_package)  # messages list the packages in one order, whatever the path's
        built_in = [point for point in claimed if _is_built_in(point)]
        if len(claimed) == 1 or built_in:
            points[name] = (built_in or claimed)[0]
            if len(claimed) > 1:
                shadowed[name] = [point for point in claimed if not _is_built_in(point)]
        else:
            ambiguous[name] = claimed
    for name, others in shadowed.items():
        _log.warning(
            "warning: %s declare%s the suite name %r, which is expvid's built-in suite (%s): the built-in is "
            "used. A package cannot replace a built-in suite; to run its suite, give its entry point in the "
            "group %r another name.",
            ", ".join(_described(point) for point in others), "s" if len(others) == 1 else "",
            name, points[name].value, ENTRY_POINT_GROUP,
        )  # fmt: skip
    return SuiteDeclarations(points, shadowed, ambiguous)


def _entry_points() -> dict[str, EntryPoint]:
    return declarations().points


def suite_names() -> list[str]:
    """Installed suites: the default first, then by name (names two outside packages claim too,
    so that `expvid suites list` shows them with the reason they cannot be used)."""
    found = declarations()
    names = set(found.points) | set(found.ambiguous) | set(_REGISTERED)
    return sorted(names, key=lambda name: (name != DEFAULT_SUITE, name))


def register_suite(name: str, factory: Callable[..., EvalSuite] | type) -> None:
    """Add (or replace) a suite in this process: a class, or a callable taking the settings."""
    _REGISTERED[name] = factory


def suite_class(name: str) -> Any:
    """The suite's class (or factory) without building it; `UnknownSuiteError` for an unknown name."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    claimed = declarations().ambiguous.get(name)
    if claimed:
        raise UnknownSuiteError(
            f"suite {name!r} is declared by {len(claimed)} installed packages: "
            + "; ".join(_described(point) for point in claimed)
            + "; which one to use is not decided by install order: uninstall one, or give one's entry "
            f"point in {ENTRY_POINT_GROUP!r} another name"
        )
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
