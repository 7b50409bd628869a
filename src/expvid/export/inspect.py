"""`expvid export inspect DATA --out DIR`: an Inspect AI task package for a suite's release.

Inspect AI (UK AISI) runs tasks (a dataset of samples, a solver, a scorer) found by name through its
entry-point group `inspect_ai`, and writes one self-describing log per run that its viewer reads. The
package written here is such an extension, a pip-installable folder:

- `pyproject.toml`: the distribution `expvid-inspect-<suite>` and its `inspect_ai` entry point, so
  `pip install DIR` then `inspect eval expvid_<suite>/<suite> --model ...` runs it (and `inspect eval
  DIR/expvid_<suite>/tasks.py` runs it without installing);
- `expvid_<suite>/tasks.py`: the `@task` function, a thin shim over `expvid.export.inspect_runtime`
  (install expvid in Inspect's environment: the scorer is the suite's own);
- `expvid_<suite>/samples.jsonl`: one line per item: its messages exactly as `expvid eval` builds them
  (the suite's `messages`: its prompt text and the frames in their places), the item itself (what the
  scorer reads), its gold answer as Inspect's target and the frames' indices and times;
- `expvid_<suite>/frames/`: the frames, sampled ONCE here by expvid (the suite's frame count, spacing
  and resolution, frame-exact, JPEG as `expvid eval` sends them), content-addressed (a frame two items
  share is one file). Inspect hands them to the model as image content; every model is sent the same
  frames, and none of them ever sees a path;
- `expvid_<suite>/export.json`: the suite, its settings, the decoding defaults, the frame options, the
  release it came from (fingerprint), and the items left out (invalid records, media that could not be
  decoded), which `expvid score --from inspect` scores 0 as `expvid eval` does.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from expvid.models.types import ImagePart
from expvid.schema import Item
from expvid.suites.defaults import DEFAULT_SUITE
from expvid.suites.protocol import FrameOptions

SAMPLES_FILE = "samples.jsonl"
EXPORT_FILE = "export.json"
FRAMES_DIR = "frames"
#: Every exported package, module and distribution name starts with it (never another project's).
NAMESPACE = "expvid"
_EXTENSIONS = {"image/jpeg": ".jpg", "image/png": ".png", "image/webp": ".webp", "image/gif": ".gif"}


@dataclass
class InspectPackageReport:
    out: Path
    module: str
    task: str
    samples: int = 0
    frames: int = 0
    #: Item id -> why it is not in the package (its media could not be decoded).
    left_out: dict[str, str] = field(default_factory=dict)
    invalid: int = 0

    @property
    def registry_name(self) -> str:
        """The name `inspect eval` takes once the package is installed."""
        return f"{self.module}/{self.task}"


def identifier(suite: str) -> str:
    """A suite name as a Python identifier (`video-mme` -> `video_mme`)."""
    return re.sub(r"[^a-z0-9_]+", "_", suite.lower()).strip("_") or "suite"


def module_name(suite: str) -> str:
    """The package's module, `expvid_<suite>` (`expvid_expvid` for ExpVid: never `expvid` itself)."""
    return f"{NAMESPACE}_{identifier(suite)}"


def write_inspect_package(
    out: Path,
    data: Path,
    *,
    suite: str = DEFAULT_SUITE,
    settings: dict[str, Any] | None = None,
    tasks: list[str] | None = None,
    frames: FrameOptions | None = None,
    workers: int = 2,
) -> InspectPackageReport:
    """Write the package for the suite's release at `data` (its items, or those of `tasks`) into `out`."""
    from expvid.suites.registry import get_suite

    the_suite: Any = get_suite(suite, settings)
    root = data.resolve()
    dataset = the_suite.load(root, tasks=tasks)
    if dataset.unreadable:
        raise ValueError(f"{root}: {dataset.unreadable[0]} (the records of that file cannot be counted)")
    if not dataset.items:
        raise ValueError(f"{root}: no item to export")
    options = the_suite.resolve_frames(frames or FrameOptions())
    module = module_name(suite)
    out = out.resolve()
    package = out / module
    (package / FRAMES_DIR).mkdir(parents=True, exist_ok=True)
    report = InspectPackageReport(
        out=out, module=module, task=identifier(suite), invalid=len(dataset.invalid)
    )
    lines = asyncio.run(_sample_lines(the_suite, dataset.items, options, package, report, workers))
    (package / SAMPLES_FILE).write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    )
    generation = the_suite.generation_defaults()
    export = {
        "suite": suite,
        "settings": the_suite.settings.recorded(),
        "tasks": [spec.name for spec in dataset.tasks],
        "generation": {"temperature": generation.temperature, "max_tokens": generation.max_tokens,
                       "source": generation.source},
        "frames": options.model_dump(mode="json"),
        "exported_from": str(root),
        "fingerprint": dataset.fingerprint(),
        "expvid": _expvid_version(),
        "left_out": report.left_out,
        "invalid_records": [str(record.problem) for record in dataset.invalid],
    }  # fmt: skip
    (package / EXPORT_FILE).write_text(json.dumps(export, indent=2, ensure_ascii=False) + "\n")
    (package / "__init__.py").write_text(f'"""Inspect AI tasks of the expvid suite {suite!r}."""\n')
    (package / "tasks.py").write_text(_tasks_source(suite, report.task))
    (package / "_registry.py").write_text(
        f'"""The `inspect_ai` entry point: importing it registers the task."""\n\n'
        f"from {module}.tasks import {report.task}\n\n__all__ = [{report.task!r}]\n"
    )
    (out / "pyproject.toml").write_text(_pyproject(suite, module))
    (out / "README.md").write_text(_readme(report, suite, root))
    return report


async def _sample_lines(
    suite: Any,
    items: list[Item],
    options: FrameOptions,
    package: Path,
    report: InspectPackageReport,
    workers: int,
) -> list[dict[str, Any]]:
    """One line per item whose media decode, frames written once; the others named in `report`."""
    from expvid.media.errors import MediaError
    from expvid.run.media_inputs import MediaPreparer

    preparer = MediaPreparer(cache=None, workers=workers)
    written: set[str] = set()

    async def one(item: Item) -> dict[str, Any] | None:
        try:
            prepared = await preparer.prepare(item, suite.sampler(item, options))
        except (MediaError, OSError, ValueError) as error:
            report.left_out[item.id] = f"media could not be read: {error}"
            return None

        def frame_file(image: ImagePart) -> str:
            name = f"{FRAMES_DIR}/{image.digest}{_EXTENSIONS.get(image.mime, '.bin')}"
            if name not in written:  # content-addressed: a frame two items share is one file
                (package / name).write_bytes(image.data)
                written.add(name)
            return name

        messages = []
        for message in suite.messages(item, prepared.images):
            parts = [
                {"image": frame_file(part)} if isinstance(part, ImagePart) else {"text": part.text}
                for part in message.content
            ]
            messages.append({"role": message.role, "content": parts})
        return {
            "id": item.id,
            "task": item.task,
            "messages": messages,
            "target": target_of(item),
            "frames": [frame.model_dump(mode="json") for frame in prepared.frames],
            "item": item.model_dump(mode="json"),
        }

    lines = [line for line in await asyncio.gather(*(one(item) for item in items)) if line is not None]
    report.samples = len(lines)
    report.frames = len(written)
    return lines


def target_of(item: Item) -> str | list[str]:
    """The gold answer as Inspect's target: a letter or text, a list of accepted texts, or JSON."""
    answer = item.answer
    if isinstance(answer, str):
        return answer
    if isinstance(answer, list) and all(isinstance(value, str) for value in answer):
        return [str(value) for value in answer]
    if isinstance(answer, list):
        return json.dumps([value.as_list() if hasattr(value, "as_list") else value for value in answer])
    return str(answer)


def _expvid_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("expvid")
    except PackageNotFoundError:
        return "unknown"


def _tasks_source(suite: str, task: str) -> str:
    return f'''"""The Inspect AI task of the expvid suite {suite!r}, written by `expvid export inspect` (expvid {_expvid_version()}).

The samples, frames and settings are the files beside this module; prompts, answer reading and scoring
are the suite's own, from `expvid.export.inspect_runtime` (install expvid in Inspect's environment).
"""

from pathlib import Path

from inspect_ai import Task, task

from expvid.export import inspect_runtime

PACKAGE = Path(__file__).resolve().parent


@task
def {task}(judge: str | None = None, tasks: str | None = None) -> Task:
    """{suite} as expvid runs it. judge: an expvid judge spec for answers a judge decides (default: the
    EXPVID_JUDGE environment variable, else the suite's offline judge); tasks: comma-separated tasks."""
    return inspect_runtime.build_task(PACKAGE, judge=judge, tasks=tasks)
'''


def _pyproject(suite: str, module: str) -> str:
    return f"""[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{module.replace("_", "-")}-inspect"
version = "0.1.0"
description = "Inspect AI tasks of the expvid suite {suite}, written by expvid export inspect."
requires-python = ">=3.11"
dependencies = ["expvid", "inspect-ai"]

# What makes it an Inspect extension: `inspect eval {module}/{identifier(suite)}` finds the task here.
[project.entry-points.inspect_ai]
{module} = "{module}._registry"

[tool.setuptools]
packages = ["{module}"]

[tool.setuptools.package-data]
{module} = ["{SAMPLES_FILE}", "{EXPORT_FILE}", "{FRAMES_DIR}/*"]
"""


def _readme(report: InspectPackageReport, suite: str, root: Path) -> str:
    left = (
        f"\n{len(report.left_out)} item(s) are not in the package: their media could not be decoded "
        f"(listed in `{report.module}/{EXPORT_FILE}`); `expvid score --from inspect` scores them 0, as "
        "`expvid eval` scores a media failure.\n"
        if report.left_out
        else ""
    )
    return f"""# Inspect AI task: `{report.registry_name}` ({suite})

Written by `expvid export inspect` from `{root}`: {report.samples} samples, {report.frames} frames sampled
once by expvid (the same frames for every model).
{left}
```bash
pip install expvid inspect-ai        # the scorer is the suite's own
pip install .                        # this folder: registers the task with Inspect
inspect eval {report.registry_name} --model openai/gpt-4o --log-dir logs/
inspect eval {report.registry_name} -T judge=openai:gpt-4o   # answers a judge decides, with an LLM judge
expvid score --from inspect logs/    # the paper's table, item-by-item agreement, a run for `expvid view`
```

Without installing: `inspect eval {report.module}/tasks.py@{report.task} --model ...`.
"""
