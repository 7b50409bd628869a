"""`expvid export lmms-eval OUT --data DIR`: an lmms-eval task package for an ExpVid-layout benchmark.

Written to lmms-eval's own task format (read from EvolvingLMMs-Lab/lmms-eval, `lmms_eval/api/task.py`
`TaskConfig`, `lmms_eval/api/group.py` `GroupConfig`, and its task folders):
- `_default_template_yaml`: what every task shares (output type, generation settings of ExpVid F.2,
  `doc_to_visual`, the metric with its aggregation), pulled in by each task with `include:`;
- one `<prefix>_<task>.yaml` per task: its data (`dataset_path: json` with the task's annotation file
  as the `test` split, or a Hub id with the task's config name) and its `!function utils.*` hooks;
- the annotation files themselves, copied into the package (`annotations/level{N}/<task>.jsonl`, a
  few hundred KB) and named by paths relative to it: lmms-eval 0.7+ resolves a relative `data_files`
  against the YAML's folder (`utils._maybe_resolve_yaml_local_data_files`), so the package runs
  wherever it is copied, with no path of the exporting machine in it. Videos are found through
  `EXPVID_DATA_ROOT`, else the benchmark folder at the same place relative to the package as when it
  was exported, else that folder's absolute path;
- groups per level with lmms-eval's `aggregate_metric_list` set to reproduce ExpVid Table 2: Level 1
  pooled over items (`weight_by_size: true`), Levels 2 and 3 the mean of their tasks; and one group
  for all three;
- `utils.py`: thin functions calling `expvid.export.lmms_eval_runtime` (F.4 prompts, expvid's
  extraction and metrics), so the numbers are expvid's;
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

from expvid.hub.card import config_name
from expvid.scoring.levels import EXPVID_LEVELS, LevelRule
from expvid.suites.base import TaskSpec
from expvid.suites.expvid_eval import DEFAULT_FRAMES, GENERATION
from expvid.suites.expvid_suite import EXPVID_TASKS, load_expvid

METRIC = "expvid_score"
TEMPLATE = "_default_template_yaml"
_FUNCTION = "__function__:"


@dataclass
class PackageReport:
    out: Path
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
    tasks: list[str] | None = None,
    prefix: str = "expvid",
    hub_id: str | None = None,
    revision: str | None = None,
) -> PackageReport:
    """Write the package for the benchmark at `data` (its tasks present, or `tasks`) into `out`."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", prefix):
        raise ValueError(
            f"--prefix must be lower-case letters, digits and _ (a Python identifier), got {prefix!r}"
        )
    root = data.resolve()
    dataset = load_expvid(root, tasks=tasks, check_media=False)
    counts = dataset.by_task()
    specs = [spec for spec in EXPVID_TASKS if spec in dataset.tasks and counts.get(spec.name)]
    if not specs:
        raise ValueError(f"{root}: no task with items to export")
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    report = PackageReport(out=out)
    if not hub_id:  # the package carries its own questions, named relative to itself
        for spec in specs:
            target = out / spec.path
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.resolve() != (root / spec.path).resolve():
                shutil.copyfile(root / spec.path, target)
            report.files.append(target)

    template = {
        "output_type": "generate_until",
        "test_split": "test",
        "doc_to_visual": _function("utils.expvid_doc_to_visual"),
        "generation_kwargs": {
            "max_new_tokens": GENERATION.max_tokens,
            "temperature": GENERATION.temperature,
            "top_p": 1.0,
            "num_beams": 1,
            "do_sample": True,
        },
        "metric_list": [
            {"metric": METRIC, "aggregation": _function("utils.expvid_aggregate"), "higher_is_better": True}
        ],
        "lmms_eval_specific_kwargs": {"default": {"pre_prompt": "", "post_prompt": "", "with_asr": False}},
        "metadata": {"version": 1.0, "expvid": _expvid_version(), "exported_from": str(root)},
    }
    _write(report, out / TEMPLATE, template)
    for spec in specs:
        _write(
            report,
            out / f"{prefix}_{spec.name}.yaml",
            _task_config(spec, prefix, root, hub_id, revision, len(counts[spec.name])),
        )
        report.tasks.append(f"{prefix}_{spec.name}")
    for level in EXPVID_LEVELS:
        members = [f"{prefix}_{name}" for name in level.tasks if f"{prefix}_{name}" in report.tasks]
        if not members:
            continue
        group = f"{prefix}_{level.name.lower()}"
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
    utils.write_text(_utils_source(specs, root, prefix, _relative(root, out)), encoding="utf-8")
    report.files.append(utils)
    readme = out / "README.md"
    readme.write_text(_readme(report, root, prefix, hub_id), encoding="utf-8")
    report.files.append(readme)
    return report


def _task_config(
    spec: TaskSpec, prefix: str, root: Path, hub_id: str | None, revision: str | None, n: int
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "include": TEMPLATE,
        "task": f"{prefix}_{spec.name}",
        "task_alias": spec.paper_name,
    }
    if hub_id:
        config["dataset_path"] = hub_id
        config["dataset_name"] = config_name(spec)
        if revision:
            config["dataset_kwargs"] = {"revision": revision}
    else:
        config["dataset_path"] = "json"
        # Relative to the package folder (lmms-eval 0.7+ resolves it there): the copy made above.
        config["dataset_kwargs"] = {"data_files": {"test": spec.path}}
    config["doc_to_text"] = _function(f"utils.{spec.name}_doc_to_text")
    config["doc_to_target"] = _function(f"utils.{spec.name}_doc_to_target")
    config["process_results"] = _function(f"utils.{spec.name}_process_results")
    frames = DEFAULT_FRAMES[f"L{spec.level}"]
    config["metadata"] = {
        "version": 1.0,
        "expvid_task": spec.name,
        "expvid_metric": spec.metric,
        "items": n,
        "frames_f2": frames,
        "exported_from": str(
            root
        ),  # lmms-eval logs it in results.json: `expvid score --from lmms-eval` reads it
    }
    return config


def _write(report: PackageReport, path: Path, data: dict[str, Any]) -> None:
    path.write_text(_dump(data), encoding="utf-8")
    report.files.append(path)


def _relative(root: Path, out: Path) -> str:
    """The benchmark folder as seen from the package folder (`../ExpVid`), POSIX separators."""
    return Path(os.path.relpath(root, out)).as_posix()


def _utils_source(specs: list[TaskSpec], root: Path, prefix: str, relative: str) -> str:
    lines = [
        f'"""lmms-eval hooks for the `{prefix}` tasks, written by `expvid export lmms-eval` (expvid {_expvid_version()}).',
        "",
        "Prompts (ExpVid F.4), answer extraction and metrics are expvid's own, imported from",
        "`expvid.export.lmms_eval_runtime`: install expvid in lmms-eval's environment. Videos are read from",
        "EXPVID_DATA_ROOT if set, else from the benchmark folder where it was relative to this package when",
        "it was exported (ROOT_FROM_PACKAGE), else from the folder it was exported from (EXPORTED_ROOT).",
        '"""',
        "",
        "from pathlib import Path",
        "",
        "from expvid.export import lmms_eval_runtime as _runtime",
        "",
        f"ROOT_FROM_PACKAGE = {relative!r}",
        f"EXPORTED_ROOT = {str(root)!r}",
        "",
        "",
        "def _root():",
        "    return _runtime.data_root(EXPORTED_ROOT, Path(__file__).resolve().parent / ROOT_FROM_PACKAGE)",
        "",
        "",
        "def expvid_doc_to_visual(doc):",
        "    return _runtime.doc_to_visual(doc, _root())",
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
            f"def {spec.name}_doc_to_text(doc, lmms_eval_specific_kwargs=None):",
            f"    return _runtime.doc_to_text({task}, doc, _root(), lmms_eval_specific_kwargs)",
            "",
            "",
            f"def {spec.name}_doc_to_target(doc):",
            f"    return _runtime.doc_to_target({task}, doc, _root())",
            "",
            "",
            f"def {spec.name}_process_results(doc, results):",
            f"    return _runtime.process_results({task}, doc, results, _root())",
        ]
    return "\n".join(lines) + "\n"


def _readme(report: PackageReport, root: Path, prefix: str, hub_id: str | None) -> str:
    source = f"the Hub dataset `{hub_id}`" if hub_id else f"the annotation files under `{root}`"
    return f"""# lmms-eval tasks: `{prefix}`

Written by `expvid export lmms-eval` from {source}. The questions are in this folder (`annotations/`,
named relative to it: lmms-eval 0.7 or later). Videos: `EXPVID_DATA_ROOT` if set, else the benchmark folder
where it was relative to this package (`{_relative(root, report.out)}`), else `{root}`.

```bash
pip install expvid            # in lmms-eval's environment: the hooks import expvid's scoring
lmms-eval --model MODEL --model_args ... --tasks {prefix} --include_path {report.out} --log_samples --output_path logs/
expvid score --from lmms-eval logs/ --data {root}     # item-by-item comparison with expvid's numbers
```

Tasks: {", ".join(report.tasks)}. Groups: {", ".join(report.groups)} (Level 1 pooled over items, Levels 2-3 the
mean of their tasks, as in ExpVid Table 2). Metric `{METRIC}`: accuracy, Jaccard or per-blank accuracy
(0-100) as expvid computes it; each logged sample carries its expvid item id.

Differences from `expvid eval`: lmms-eval model wrappers sample the frames themselves; set them to the
paper's F.2 counts (8 for Level 1, 32 for Level 2, 96-512 for Level 3; see each task's `metadata.frames_f2`)
with the model's own `--model_args` (e.g. `max_num_frames=8`). Level-3 blanks are judged by expvid's offline
judge unless `EXPVID_JUDGE` names an LLM judge (backend spec, with `EXPVID_JUDGE_BASE_URL`).
"""
