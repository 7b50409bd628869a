"""Self-preference checks of ProMQA section 5 (Table 12), from ordinary run directories.

- generator-predictor: is a model better on questions it generated itself? Runs of several
  predictors on a benchmark whose items came from several generators (each record's
  `generation.model_id`) give a predictor x generator table of scores, per evaluator;
- predictor-evaluator: does a judge favour its own predictions? Runs of several predictors, each
  scored by several judges (one run directory per predictor and judge: copy a run and
  `expvid score` it with another `--judge`), give a predictor x evaluator table.

For every model that appears in both roles the check is the difference between its own cell and
the mean of the other cells of its row, with a 95% bootstrap interval that resamples recordings
(items of one recording are not independent) and a sign: "no sign of bias" when the interval holds
0. A row is a model or a pipeline, named by its whole spec with each model's provider and server
stripped ("openai:gpt-4o@http://..." and "gpt-4o" are one model; a Socratic pipeline is
"socratic:CAPTIONER+ANSWERER", so two pipelines that share a captioner but not an answerer are two
rows, and neither is the captioner or the answerer alone; "blind:gpt-4o" is not "gpt-4o"). Scores are the runs' item scores (ProMQA: judge 0-2 x 50), failed
items included as 0, exactly as `scores.json` counts them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from expvid.models.socratic import split_socratic
from expvid.models.spec import model_id, model_identity
from expvid.models.types import BackendConfigError
from expvid.schema import DataError

BOOTSTRAP = 2000


def canonical(name: str | None) -> str:
    """The name of a model or pipeline spec with every part's backend kind and server stripped."""
    if not name:
        return "unknown"
    text = name.strip()
    if text.startswith("socratic:"):
        try:
            captioner, answerer = split_socratic(text.removeprefix("socratic:"))
        except BackendConfigError:
            return model_id(model_identity(text) or text)
        return f"socratic:{canonical(captioner)}+{canonical(answerer)}"
    if text.startswith("blind:"):
        return f"blind:{canonical(text.removeprefix('blind:'))}"
    return model_id(model_identity(text) or text)


@dataclass
class ScoredRun:
    path: Path
    predictor: str
    evaluator: str
    #: item id -> (earned, possible, recording)
    items: dict[str, tuple[float, float, str]] = field(default_factory=dict)
    #: item id -> generator model
    generators: dict[str, str] = field(default_factory=dict)


def load_run(path: Path) -> ScoredRun:
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    judge = manifest.get("judge") or {}
    run = ScoredRun(
        path=path,
        predictor=canonical(manifest.get("model")),
        evaluator=canonical(judge.get("model") or judge.get("name")),
    )
    scores = path / "item_scores.jsonl"
    if not scores.is_file():
        raise DataError(f"{path}: no item_scores.jsonl (score the run first: expvid score {path})")
    for line in scores.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            item_id = str(row["item_id"]).split("/", 1)[-1]
            run.items[item_id] = (
                float(row["earned"]),
                float(row.get("possible") or 1.0),
                str(row.get("video_id") or item_id),
            )
    root = Path(manifest.get("dataset_root") or "")
    examples = root / "examples.json"
    if examples.is_file():
        for record in json.loads(examples.read_text(encoding="utf-8")):
            generator = (record.get("generation") or {}).get("model_id")
            run.generators[str(record.get("question_id"))] = canonical(generator)
    return run


def _score(rows: list[tuple[float, float, str]]) -> float | None:
    possible = sum(p for _, p, _ in rows)
    return round(100.0 * sum(e for e, _, _ in rows) / possible, 2) if possible else None


def _diff_interval(
    own: list[tuple[float, float, str]], others: list[tuple[float, float, str]], seed: int
) -> list[float] | None:
    """95% interval of score(own) - score(others), resampling recordings (clusters) of both sides."""
    clusters: dict[str, list[list[float]]] = defaultdict(lambda: [[0.0, 0.0], [0.0, 0.0]])
    for side, rows in ((0, own), (1, others)):
        for earned, possible, recording in rows:
            clusters[recording][side][0] += earned
            clusters[recording][side][1] += possible
    if len(clusters) < 2:
        return None
    table = np.array([[c[0][0], c[0][1], c[1][0], c[1][1]] for c in clusters.values()])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(table), size=(BOOTSTRAP, len(table)))
    sums = table[picks].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = 100.0 * (sums[:, 0] / sums[:, 1] - sums[:, 2] / sums[:, 3])
    diff = diff[np.isfinite(diff)]
    if not len(diff):
        return None
    return [round(float(np.percentile(diff, 2.5)), 2), round(float(np.percentile(diff, 97.5)), 2)]


def _check(
    table: dict[str, dict[str, list[tuple[float, float, str]]]], what: str, seed: int
) -> list[dict[str, Any]]:
    checks = []
    for row, cells in sorted(table.items()):
        if row not in cells or len(cells) < 2:
            continue
        own = cells[row]
        others = [r for column, rows in cells.items() if column != row for r in rows]
        own_score, other_score = _score(own), _score(others)
        interval = _diff_interval(own, others, seed)
        difference = None if own_score is None or other_score is None else round(own_score - other_score, 2)
        bias = None if interval is None else bool(interval[0] > 0)
        checks.append({
            "check": what, "model": row, "own": own_score, "others": other_score, "difference": difference,
            "interval95": interval, "items_own": len(own), "items_others": len(others),
            "verdict": "no data" if bias is None else ("favours itself" if bias else "no sign of bias"),
        })  # fmt: skip
    return checks


def self_preference(paths: list[Path], *, seed: int = 0) -> dict[str, Any]:
    runs = [load_run(Path(p)) for p in paths]
    # generator-predictor, per evaluator: predictor -> generator -> item rows
    gen_pred: dict[str, dict[str, dict[str, list[tuple[float, float, str]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    pred_eval: dict[str, dict[str, list[tuple[float, float, str]]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for item_id, row in run.items.items():
            generator = run.generators.get(item_id, "unknown")
            gen_pred[run.evaluator][run.predictor][generator].append(row)
            pred_eval[run.predictor][run.evaluator].append(row)
    result: dict[str, Any] = {
        "runs": [
            {"path": str(r.path), "predictor": r.predictor, "evaluator": r.evaluator, "items": len(r.items)}
            for r in runs
        ],
        "generator_predictor": {
            evaluator: {
                p: {g: _score(rows) for g, rows in sorted(cells.items())}
                for p, cells in sorted(table.items())
            }
            for evaluator, table in sorted(gen_pred.items())
        },
        "predictor_evaluator": {
            p: {e: _score(rows) for e, rows in sorted(cells.items())}
            for p, cells in sorted(pred_eval.items())
        },
        "checks": [],
    }
    for evaluator, table in sorted(gen_pred.items()):
        for check in _check(table, "generator-predictor", seed):
            result["checks"].append({**check, "evaluator": evaluator})
    result["checks"] += _check(pred_eval, "predictor-evaluator", seed)
    return result


def self_preference_markdown(result: dict[str, Any]) -> str:
    lines = ["# Self-preference checks (ProMQA section 5, Table 12)", ""]
    for evaluator, table in result["generator_predictor"].items():
        generators = sorted({g for row in table.values() for g in row})
        lines += [f"## Generator-predictor (evaluator: {evaluator})", "", "| predictor \\ generator | " + " | ".join(generators) + " |",
                  "| --- |" + " ---: |" * len(generators)]  # fmt: skip
        for predictor, row in table.items():
            lines.append(
                f"| {predictor} | "
                + " | ".join("-" if row.get(g) is None else f"{row[g]:.1f}" for g in generators)
                + " |"
            )
        lines.append("")
    evaluators = sorted({e for row in result["predictor_evaluator"].values() for e in row})
    lines += [
        "## Predictor-evaluator",
        "",
        "| predictor \\ evaluator | " + " | ".join(evaluators) + " |",
        "| --- |" + " ---: |" * len(evaluators),
    ]
    for predictor, row in result["predictor_evaluator"].items():
        lines.append(
            f"| {predictor} | "
            + " | ".join("-" if row.get(e) is None else f"{row[e]:.1f}" for e in evaluators)
            + " |"
        )
    lines += [
        "",
        "## Checks (own cell minus the mean of the row's other cells, 95% interval by recording)",
        "",
    ]
    if not result["checks"]:
        lines.append("No model appears both as a row and as a column: nothing to check.")
    for check in result["checks"]:
        lines.append(
            f"- {check['check']}: {check['model']}"
            + (f" (evaluator {check['evaluator']})" if "evaluator" in check else "")
            + f": own {check['own']} vs others {check['others']}, difference {check['difference']} "
            f"{check['interval95']}: {check['verdict']}"
        )
    return "\n".join(lines) + "\n"
