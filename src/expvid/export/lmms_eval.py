"""`expvid export lmms-eval OUT --data DIR [--suite NAME]`: an lmms-eval task package for a suite's release.

Written to lmms-eval's own task format (read from EvolvingLMMs-Lab/lmms-eval, `lmms_eval/api/task.py`
`TaskConfig`, `lmms_eval/api/group.py` `GroupConfig`, and its task folders), from what the suite
says of itself (its tasks and their release files, its levels, its decoding defaults, its settings):
- `_default_template_yaml`: what every task shares (output type, the suite's generation settings,
  the metric with its aggregation), pulled in by each task with `include:`;
- one `<prefix>_<task>.yaml` per task: its data (`dataset_path: json` with the task's release file
  as the `test` split, `process_docs` keeping the task's records where one file holds several tasks;
  or a Hub id with the task's config name) and its `!function utils.*` hooks;
- groups per level with lmms-eval's `aggregate_metric_list` reproducing the suite's table: a level
  pooled over items (`weight_by_size: true`) or the mean of its tasks; and one group for all;
- `utils.py`: thin functions calling `expvid.export.lmms_eval_runtime` with the suite's name and the
  settings it was exported with, so the prompts, extraction and metrics are the suite's own;
- the release's question files themselves, copied into the package (at their release paths, e.g.
  `annotations/level1/tools.jsonl`: a few hundred KB) and named relative to it: lmms-eval 0.7+ resolves a
  relative `data_files` against the YAML's folder (`utils._maybe_resolve_yaml_local_data_files`), so the
  package runs wherever it is copied, with no path of the exporting machine used. Media are found through
  `EXPVID_DATA_ROOT`, else the release folder where it was relative to the package when exported, else
  that folder's absolute path (kept in `metadata.exported_from` as a record);
- `README.md`: how to run it and what differs from `expvid eval` (frame sampling is the model's).
Use it with `lmms-eval --include_path OUT --tasks <prefix>` or copy OUT into `lmms_eval/tasks/`.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from expvid.schema.dataset import TaskSpec
from expvid.scoring.levels import LevelRule
from expvid.suites.defaults import DEFAULT_SUITE

METRIC = "expvid_score"
TEMPLATE = "_default_template_yaml"
#: Every exported task and group name starts with it, so none can take the name of one of lmms-eval's
#: own tasks (its `videomme` group, `mmvu_val`, ...) or of another package's.
NAMESPACE = "expvid"
_FUNCTION = "__function__:"


@dataclass
class PackageReport:
    out: Path
    #: The task and group name prefix (`lmms-eval --tasks PREFIX` runs everything).
    prefix: str = NAMESPACE
    tasks: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def _function(name: str) -> str:
    return f"{_FUNCTION}{name}"


def _dump(data: dict[str, Any]) -> str:
    """YAML with lmms-eval's `!function module.name` tags where the data says `__function__:module.name`."""
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    return re.sub(r"'?" + re.escape(_FUNCTION) + r"([\w.]+)'?", r"!function \1", text)


def _expvid_version() -> str:
    try:
        return version("expvid")
    except PackageNotFoundError:
        return "unknown"


def write_lmms_eval_package(
    out: Path,
    data: Path,
    *,
    suite: str = DEFAULT_SUITE,
    settings: dict[str, Any] | None = None,
    tasks: list[str] | None = None,
    prefix: str | None = None,
    hub_id: str | None = None,
    revision: str | None = None,
) -> PackageReport:
    """Write the package for the suite's release at `data` (its tasks with items, or `tasks`) into `out`."""
    from expvid.suites.registry import get_suite

    the_suite: Any = get_suite(suite, settings)
    prefix = prefix or default_prefix(suite)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", prefix):
        raise ValueError(
            f"--prefix must be lower-case letters, digits and _ (a Python identifier), got {prefix!r}"
        )
    root = data.resolve()
    dataset = the_suite.load(root, tasks=tasks, check_media=False)
    counts = dataset.by_task()
    specs = [spec for spec in the_suite.tasks if spec in dataset.tasks and counts.get(spec.name)]
    if not specs:
        raise ValueError(f"{root}: no task with items to export")
    shared_files = len({spec.path for spec in the_suite.tasks}) < len(the_suite.tasks)
    recorded = the_suite.settings.recorded()
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    report = PackageReport(out=out, prefix=prefix)
    copied = set() if hub_id else _copy_release_files(specs, root, out, report)
    generation = the_suite.generation_defaults()
    template = {
        "output_type": "generate_until",
        "test_split": "test",
        "generation_kwargs": generation_kwargs(generation.max_tokens, generation.temperature),
        "metric_list": [
            {"metric": METRIC, "aggregation": _function("utils.expvid_aggregate"), "higher_is_better": True}
        ],
        "lmms_eval_specific_kwargs": {"default": {"pre_prompt": "", "post_prompt": ""}},
        "metadata": {"version": 1.0, "expvid": _expvid_version(), "suite": suite, "exported_from": str(root)},
    }
    _write(report, out / TEMPLATE, template)
    for spec in specs:
        config = _task_config(spec, prefix, root, hub_id, revision, len(counts[spec.name]), suite, copied)
        if shared_files and not hub_id:  # one file, several tasks: keep this task's records
            config["process_docs"] = _function(f"utils.{spec.name}_process_docs")
        config["metadata"]["frames_paper"] = _paper_frames(the_suite, counts[spec.name][0])
        _write(report, out / f"{prefix}_{spec.name}.yaml", config)
        report.tasks.append(f"{prefix}_{spec.name}")
    for level in the_suite.levels:
        members = [f"{prefix}_{name}" for name in level.tasks if f"{prefix}_{name}" in report.tasks]
        group = f"{prefix}_{level.name.lower()}"
        if not members or group == prefix:
            continue
        weighted = level.rule is LevelRule.ITEM_WEIGHTED
        _write(report, out / f"{group}.yaml", {
            "group": group,
            "task": members,
            "aggregate_metric_list": [{"metric": METRIC, "aggregation": "mean", "weight_by_size": weighted}],
            "metadata": {"version": 1.0, "expvid_rule": level.rule.value},
        })  # fmt: skip
        report.groups.append(group)
    _write(
        report,
        out / f"{prefix}.yaml",
        {"group": prefix, "task": list(report.groups), "metadata": {"version": 1.0}},
    )
    report.groups.append(prefix)
    utils = out / "utils.py"
    utils.write_text(
        _utils_source(specs, root, prefix, suite, recorded, _relative(root, out)), encoding="utf-8"
    )
    report.files.append(utils)
    readme = out / "README.md"
    readme.write_text(_readme(report, root, prefix, hub_id, suite), encoding="utf-8")
    report.files.append(readme)
    return report


def default_prefix(suite: str) -> str:
    """The names' prefix: `expvid` for the default suite, else `expvid_<suite>` (a Python identifier)."""
    if suite == DEFAULT_SUITE:
        return NAMESPACE
    return f"{NAMESPACE}_{re.sub(r'[^a-z0-9_]+', '_', suite.lower()).strip('_')}"


def generation_kwargs(max_tokens: int, temperature: float) -> dict[str, Any]:
    """lmms-eval's `generation_kwargs` for the suite's decoding: sampling only at a temperature above 0.
    Model wrappers hand `do_sample` to Hugging Face `generate()`, which refuses sampling at
    temperature 0 ("has to be a strictly positive float"); lmms-eval's own greedy tasks write this."""
    return {
        "max_new_tokens": max_tokens,
        "temperature": temperature,
        "top_p": 1.0,
        "num_beams": 1,
        "do_sample": temperature > 0,
    }


def _copy_release_files(specs: list[TaskSpec], root: Path, out: Path, report: PackageReport) -> set[str]:
    """Copy the tasks' release files into the package at their release paths; the paths copied."""
    copied: set[str] = set()
    for path in dict.fromkeys(spec.path for spec in specs):
        source = root / path
        if not path or not source.is_file():
            continue  # a release read from a folder of files (parquet shards): named where it is
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.resolve() != source.resolve():
            shutil.copyfile(source, target)
        report.files.append(target)
        copied.add(path)
    return copied


def _relative(root: Path, out: Path) -> str:
    """The release folder as seen from the package folder (`../ExpVid`), POSIX separators."""
    return Path(os.path.relpath(root, out)).as_posix()


def _paper_frames(suite: Any, item: Any) -> int | None:
    """The frames the paper sends an item of this task (lmms-eval's model wrappers sample their own)."""
    from expvid.suites.protocol import FrameOptions

    sampler = suite.sampler(item, suite.resolve_frames(FrameOptions()))
    return None if sampler is None else sampler.num_frames


def _task_config(
    spec: TaskSpec,
    prefix: str,
    root: Path,
    hub_id: str | None,
    revision: str | None,
    n: int,
    suite: str,
    copied: set[str],
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "include": TEMPLATE,
        "task": f"{prefix}_{spec.name}",
        "task_alias": spec.paper_name,
    }
    if hub_id:
        from expvid.hub.card import config_name

        config["dataset_path"] = hub_id
        config["dataset_name"] = config_name(spec)
        if revision:
            config["dataset_kwargs"] = {"revision": revision}
    else:
        config["dataset_path"] = "json"
        # Relative to the package folder (lmms-eval 0.7+ resolves it there): the copy made of it.
        data_file = spec.path if spec.path in copied else str(root / spec.path)
        config["dataset_kwargs"] = {"data_files": {"test": data_file}}
    config["doc_to_visual"] = _function(f"utils.{spec.name}_doc_to_visual")
    config["doc_to_text"] = _function(f"utils.{spec.name}_doc_to_text")
    config["doc_to_target"] = _function(f"utils.{spec.name}_doc_to_target")
    config["process_results"] = _function(f"utils.{spec.name}_process_results")
    config["metadata"] = {
        "version": 1.0,
        "expvid_suite": suite,
        "expvid_task": spec.name,
        "expvid_metric": spec.metric,
        "items": n,
        # lmms-eval logs it in results.json: `expvid score --from lmms-eval` reads it
        "exported_from": str(root),
    }
    return config


def _write(report: PackageReport, path: Path, data: dict[str, Any]) -> None:
    path.write_text(_dump(data), encoding="utf-8")
    report.files.append(path)


def _utils_source(
    specs: list[TaskSpec], root: Path, prefix: str, suite: str, settings: dict[str, Any], relative: str
) -> str:
    lines = [
        f'"""lmms-eval hooks for the `{prefix}` tasks ({suite}), written by `expvid export lmms-eval` (expvid {_expvid_version()}).',
        "",
        "Prompts, answer extraction and metrics are the suite's own, imported from",
        "`expvid.export.lmms_eval_runtime`: install expvid in lmms-eval's environment. Media are read from",
        "EXPVID_DATA_ROOT if set, else from the release folder where it was relative to this package when it",
        "was exported (ROOT_FROM_PACKAGE), else from the folder it was exported from (EXPORTED_ROOT).",
        '"""',
        "",
        "from pathlib import Path",
        "",
        "from expvid.export import lmms_eval_runtime as _runtime",
        "",
        f"ROOT_FROM_PACKAGE = {relative!r}",
        f"EXPORTED_ROOT = {str(root)!r}",
        f"SUITE = {suite!r}",
        f"SETTINGS = {settings!r}",
        "",
        "",
        "def _root():",
        "    return _runtime.data_root(EXPORTED_ROOT, Path(__file__).resolve().parent / ROOT_FROM_PACKAGE)",
        "",
        "",
        "def expvid_aggregate(results):",
        "    return _runtime.aggregate(results)",
    ]
    for spec in specs:
        task = repr(spec.name)
        lines += [
            "",
            "",
            f"def {spec.name}_process_docs(dataset):",
            f"    return dataset.filter(lambda doc: _runtime.task_of(doc, SUITE, SETTINGS) == {task})",
            "",
            "",
            f"def {spec.name}_doc_to_visual(doc):",
            f"    return _runtime.doc_to_visual(doc, _root(), {task}, SUITE, SETTINGS)",
            "",
            "",
            f"def {spec.name}_doc_to_text(doc, lmms_eval_specific_kwargs=None):",
            f"    return _runtime.doc_to_text({task}, doc, _root(), lmms_eval_specific_kwargs, SUITE, SETTINGS)",
            "",
            "",
            f"def {spec.name}_doc_to_target(doc):",
            f"    return _runtime.doc_to_target({task}, doc, _root(), SUITE, SETTINGS)",
            "",
            "",
            f"def {spec.name}_process_results(doc, results):",
            f"    return _runtime.process_results({task}, doc, results, _root(), SUITE, SETTINGS)",
        ]
    return "\n".join(lines) + "\n"


def _readme(report: PackageReport, root: Path, prefix: str, hub_id: str | None, suite: str) -> str:
    source = f"the Hub dataset `{hub_id}`" if hub_id else f"the release files under `{root}`"
    return f"""# lmms-eval tasks: `{prefix}` ({suite})

Written by `expvid export lmms-eval` from {source}. The question files are in this folder, named relative
to it (lmms-eval 0.7 or later). Media: `EXPVID_DATA_ROOT` if set, else the release folder where it was
relative to this package (`{_relative(root, report.out)}`), else `{root}`.

```bash
pip install expvid            # in lmms-eval's environment: the hooks import expvid's scoring
lmms-eval --model MODEL --model_args ... --tasks {prefix} --include_path {report.out} --log_samples --output_path logs/
expvid score --from lmms-eval logs/ --data {root} --suite {suite}    # item-by-item comparison with expvid
```

Tasks: {", ".join(report.tasks)}. Groups: {", ".join(report.groups)} (each level pooled over items or the mean
of its tasks, as the suite's table computes it). Metric `{METRIC}`: the suite's own per-item score (0-100 when
aggregated); each logged sample carries its expvid item id.

Differences from `expvid eval`: lmms-eval model wrappers sample the frames themselves; set them to the
paper's counts (each task's `metadata.frames_paper`) with the model's own `--model_args` (e.g.
`max_num_frames=8`). Answers that need a judge are judged by the suite's offline judge unless `EXPVID_JUDGE`
names an LLM judge (backend spec, with `EXPVID_JUDGE_BASE_URL`).
"""
