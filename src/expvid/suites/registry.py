"""Suite lookup by name, so the CLI and the runner never hard-code a benchmark."""

from __future__ import annotations

from collections.abc import Callable

from expvid.suites.protocol import EvalSuite


def _expvid() -> EvalSuite:
    from expvid.suites.expvid_eval import ExpVidSuite

    return ExpVidSuite()


_FACTORIES: dict[str, Callable[[], EvalSuite]] = {"expvid": _expvid}


def register_suite(name: str, factory: Callable[[], EvalSuite]) -> None:
    _FACTORIES[name] = factory


def suite_names() -> list[str]:
    return list(_FACTORIES)


def get_suite(name: str) -> EvalSuite:
    try:
        return _FACTORIES[name]()
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; suites: {', '.join(_FACTORIES)}") from None
