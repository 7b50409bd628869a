"""Suite lookup by name, so the CLI and the runner never hard-code a benchmark.

`get_suite(name, options)` builds a fresh suite; `options` are suite-specific settings that change
what is loaded or scored (SFE: `languages`, `bertscore`, `levels`). A suite that takes none
rejects any, so a misspelt option fails before a run starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from expvid.suites.protocol import EvalSuite


def _expvid(**options: Any) -> EvalSuite:
    from expvid.suites.expvid_eval import ExpVidSuite

    return ExpVidSuite(**options)


def _scivideobench(**options: Any) -> EvalSuite:
    from expvid.suites.scivideobench import SciVideoBenchSuite

    return SciVideoBenchSuite(**options)


def _promqa(**options: Any) -> EvalSuite:
    from expvid.suites.promqa import ProMQASuite

    return ProMQASuite(**options)


def _sfe(**options: Any) -> EvalSuite:
    from expvid.suites.sfe import SFESuite

    return SFESuite(**options)


_FACTORIES: dict[str, Callable[..., EvalSuite]] = {
    "expvid": _expvid,
    "scivideobench": _scivideobench,
    "promqa": _promqa,
    "sfe": _sfe,
}


def register_suite(name: str, factory: Callable[..., EvalSuite]) -> None:
    _FACTORIES[name] = factory


def suite_names() -> list[str]:
    return list(_FACTORIES)


def get_suite(name: str, options: Mapping[str, Any] | None = None) -> EvalSuite:
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise ValueError(f"unknown suite {name!r}; suites: {', '.join(_FACTORIES)}") from None
    return factory(**dict(options or {}))
