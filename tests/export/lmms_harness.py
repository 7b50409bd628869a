"""A stand-in for lmms-eval's task runner, written from its code (not installed: it pulls torch, wandb, ...).

`LmmsHarness` does with an exported task package what lmms-eval 0.4+ does (facts from
EvolvingLMMs-Lab/lmms-eval at 75571cf: `utils.load_yaml_config` / `import_function`, `api/task.py`
`ConfigurableTask.doc_to_text` / `process_results`, `evaluator.py` sample logging,
`loggers/evaluation_tracker.py` `save_results_samples`, `api/metrics.aggregate_subtask_metrics`):
`!function utils.name` loads `utils.py` next to the YAML; `include:` merges the template under the
task; documents come from `datasets.load_dataset(dataset_path, data_files=...)[test_split]`;
`process_docs` filters them; `lmms_eval_specific_kwargs` gets its `default` merged in and is passed
to `doc_to_text`; responses are
stripped before `process_results`; samples are logged one JSON line per document; groups average
their tasks' values, weighted by size when `weight_by_size`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

datasets = pytest.importorskip("datasets")
TASKS = ["tools", "video_verification", "step_prediction", "sequence_generation", "scientific_discovery"]


class _Loader(yaml.SafeLoader):
    pass


def load_task_yaml(path: Path) -> dict[str, Any]:
    """A task or group YAML as lmms-eval reads it: `!function` imported from the YAML's folder, `include` merged."""

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> Callable[..., Any]:
        module_name, _, name = loader.construct_scalar(node).rpartition(".")  # type: ignore[arg-type]
        spec = importlib.util.spec_from_file_location(module_name, path.parent / f"{module_name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, name)  # type: ignore[no-any-return]

    _Loader.add_constructor("!function", function)
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)
    if "include" in config:
        base = load_task_yaml(path.parent / config.pop("include"))
        config = {**base, **config}
    return config  # type: ignore[no-any-return]


Model = Callable[[str, dict[str, Any], int], str]


@dataclass
class HarnessRun:
    values: dict[str, list[Any]] = field(default_factory=dict)  # task -> per-doc metric values
    scores: dict[str, float] = field(default_factory=dict)  # task -> aggregated
    sizes: dict[str, int] = field(default_factory=dict)
    responses: dict[str, list[str]] = field(default_factory=dict)


class LmmsHarness:
    def __init__(self, package: Path, cache: Path) -> None:
        self.package = package
        self.cache = cache

    def run(
        self, tasks: list[str], model: Model, logdir: Path | None = None, *, old_format: bool = False
    ) -> HarnessRun:
        out = HarnessRun()
        for task in tasks:
            config = load_task_yaml(self.package / f"{task}.yaml")
            docs = datasets.load_dataset(
                config["dataset_path"], cache_dir=str(self.cache), **config.get("dataset_kwargs", {})
            )[config["test_split"]]
            if "process_docs" in config:  # ConfigurableTask applies it to the split's documents
                docs = config["process_docs"](docs)
            kwargs = dict(config.get("lmms_eval_specific_kwargs") or {})
            kwargs.update(kwargs.get("default", {}))
            metric = config["metric_list"][0]
            lines = []
            out.values[task], out.responses[task] = [], []
            for doc_id, doc in enumerate(docs):
                context = config["doc_to_text"](doc, kwargs)
                visual = config["doc_to_visual"](doc)
                assert all(Path(v).is_file() for v in visual)
                response = model(context, doc, doc_id)
                metrics = config["process_results"](doc, [response.strip()])
                out.values[task].append(metrics[metric["metric"]])
                out.responses[task].append(response)
                target = str(config["doc_to_target"](doc))
                lines.append(_log_line(doc_id, doc, target, context, response, metrics, old_format))
            out.scores[task] = metric["aggregation"](out.values[task])
            out.sizes[task] = len(docs)
            if logdir is not None:
                folder = logdir / "model__sanitized"
                folder.mkdir(parents=True, exist_ok=True)
                name = f"20260101_120000_samples_{task}.jsonl"
                (folder / name).write_text(
                    "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
                )
        if logdir is not None:
            configs = {
                t: {"task": t, "metadata": load_task_yaml(self.package / f"{t}.yaml")["metadata"]}
                for t in tasks
            }
            results = {
                "results": {t: {"expvid_score,none": s} for t, s in out.scores.items()},
                "configs": configs,
            }
            (logdir / "model__sanitized" / "20260101_120000_results.json").write_text(
                json.dumps(results), encoding="utf-8"
            )
        return out

    def group(self, name: str, run: HarnessRun) -> float:
        """A level group's value, as lmms-eval's aggregate_subtask_metrics computes it."""
        config = load_task_yaml(self.package / f"{name}.yaml")
        weighted = config["aggregate_metric_list"][0]["weight_by_size"]
        members = [t for t in config["task"] if t in run.scores]
        sizes = [run.sizes[t] if weighted else 1 for t in members]
        return sum(run.scores[t] * n for t, n in zip(members, sizes, strict=True)) / sum(sizes)


def _log_line(
    doc_id: int,
    doc: dict[str, Any],
    target: str,
    context: str,
    response: str,
    metrics: dict[str, Any],
    old: bool,
) -> dict[str, Any]:
    doc_hash = hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False, default=str).encode()).hexdigest()
    if old:  # lmms-eval before 0.4: doc and arguments kept, responses wrapped per request
        return {"doc_id": doc_id, "doc": doc, "target": target, "arguments": {"0": "max_new_tokens"},
                "resps": [[response]], "filtered_resps": [response], "doc_hash": doc_hash, "input": context, **metrics}  # fmt: skip
    return {"doc_id": doc_id, "target": target, "filtered_resps": response, "token_counts": [None],
            "doc_hash": doc_hash, "input": context, **metrics}  # fmt: skip


def scripted_model(context: str, doc: dict[str, Any], doc_id: int) -> str:
    """Right, wrong, unparseable and partly right answers in the shape each prompt asks for, by doc position."""
    answer = doc["answer"]
    kind = doc_id % 4
    if kind == 3:
        return "I cannot tell from these frames."
    if isinstance(answer, list) and "fill-in-the-blank" in context:
        blanks = list(answer) if kind == 0 else [answer[0], *["xylophone"] * (len(answer) - 1)]
        return "The blanks are \\boxed{" + ", ".join(blanks) + "}"
    if isinstance(answer, list):
        steps = [str(a) for a in answer]
        return "\\boxed{" + ", ".join(steps if kind == 0 else steps[:1]) + "}"
    if re.fullmatch(r"[A-J]", str(answer)):
        wrong = "A" if answer != "A" else "B"
        return f"The answer is \\boxed{{{answer if kind == 0 else wrong}}}"
    return f"\\boxed{{{answer if kind == 0 else int(answer) + 1}}}"
