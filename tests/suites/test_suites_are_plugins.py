"""Suites are plug-ins: found through entry points, and named nowhere outside their own packages."""

from __future__ import annotations

import ast
from importlib.metadata import entry_points
from pathlib import Path

import expvid
from expvid.suites.defaults import DEFAULT_SUITE, ENTRY_POINT_GROUP
from expvid.suites.registry import get_suite, register_suite, suite_class, suite_names
from expvid.suites.settings import SuiteSettings

SOURCE = Path(expvid.__file__).parent
#: The parts of expvid that must ask the registry and the suite instead of naming one.
GENERIC = ("cli", "run", "view", "hub", "export", "scoring", "media", "models", "schema", "platform")


def test_every_built_in_suite_comes_from_an_entry_point() -> None:
    declared = {point.name: point.value for point in entry_points(group=ENTRY_POINT_GROUP)}
    assert {"expvid", "scivideobench", "promqa", "sfe", "mmvu"} <= set(declared)
    assert suite_names()[0] == DEFAULT_SUITE
    for name in declared:
        cls = suite_class(name)
        assert cls.name == name and issubclass(cls.Settings, SuiteSettings)
        assert get_suite(name).settings == cls.Settings()  # every default validates


def test_no_generic_module_names_a_suite() -> None:
    """String constants equal to a suite name (other than the default one, which is also the tool's
    name) appear only in the suite's own package."""
    names = {name for name in suite_names() if name != DEFAULT_SUITE}
    found = []
    for part in GENERIC:
        for path in sorted((SOURCE / part).rglob("*.py")):
            where = path.relative_to(SOURCE).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                    found.append(f"{where}:{node.lineno}: {node.value!r}")
    assert not found, found


def test_a_suite_registered_in_process_is_used_everywhere_by_name(tmp_path) -> None:
    from expvid.suites.mmvu import MMVUSuite

    class Renamed(MMVUSuite):
        name = "mmvu-copy"

    register_suite("mmvu-copy", Renamed)
    assert (
        "mmvu-copy" in suite_names()
        and get_suite("mmvu-copy", {"prompt": "direct"}).settings.prompt == "direct"
    )
