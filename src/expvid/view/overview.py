"""The overview page's content: each run's manifest in readable form, the paper-layout table,
failure and caveat counts, and (with several runs) where they agree.

The table is `expvid.run.report`'s (the same rows `expvid report` prints). Counts are the viewer's
own outcome classification, so every number links to exactly the items it counts.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from typing import Any

from pydantic import ValidationError

from expvid.run.report.table import LoadedRun, Table, build_table
from expvid.run.report.text_formats import run_notes
from expvid.run.rundir import RunDir
from expvid.run.scoring_phase import RunScores
from expvid.view.display import jsonable
from expvid.view.outcome import Outcome
from expvid.view.session import RunView, ViewSession

_MANIFEST_SHOWN = {
    "suite", "model", "command", "config", "samplers", "judge", "dataset_root", "dataset_fingerprint",
    "versions", "created_at", "updated_at",
}  # fmt: skip
_CONFIG_SHOWN = {"identity", "settings", "backend", "generation"}
OUTCOME_ORDER = [o.value for o in Outcome]


def build_overview(session: ViewSession, rows: dict[str, Any]) -> dict[str, Any]:
    counts = _outcome_counts(rows)
    table, table_note = _table(session)
    return {
        "runs": [_run(run, counts[index], session) for index, run in enumerate(session.runs)],
        "table": table,
        "table_note": table_note,
        "table_notes": run_notes(table) if table is not None else [],
        "outcomes": OUTCOME_ORDER,
        "pairs": _pairs(rows, session) if len(session.runs) > 1 else [],
        "n_items": len(rows["rows"]),
        "tasks": rows["tasks"],
    }


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _run(run: RunView, counts: dict[str, Any], session: ViewSession) -> dict[str, Any]:
    raw = run.files.manifest_raw
    config = _dict(raw.get("config"))
    scores = run.files.scores or {}
    summary = _dict(scores.get("run"))
    command = raw.get("command")
    selected = len(run.dataset.selected)
    answered = sum(1 for (_, sample) in run.files.predictions if sample == 0)
    return {
        "key": run.key,
        "label": run.label,
        "spec": run.spec,
        "root": str(run.root),
        "model": raw.get("model"),
        "suite": raw.get("suite"),
        "created_at": raw.get("created_at"),
        "updated_at": raw.get("updated_at"),
        "command": shlex.join(str(c) for c in command) if isinstance(command, list) else None,
        "backend": config.get("backend"),
        "generation": config.get("generation"),
        "identity": config.get("identity"),
        "settings": config.get("settings"),
        "config_extra": {k: v for k, v in config.items() if k not in _CONFIG_SHOWN},
        "sent": _sent_summary(run),
        "samplers": _dict(raw.get("samplers")),
        "judge": raw.get("judge"),
        "scored_judge": summary.get("judge"),
        "versions": raw.get("versions"),
        "dataset": {
            "recorded_root": run.dataset.recorded_root,
            "root": str(run.dataset.root) if run.dataset.root else None,
            "recorded_fingerprint": raw.get("dataset_fingerprint"),
            "fingerprint": run.dataset.fingerprint,
            "status": run.dataset.fingerprint_status,
            "note": run.dataset.note,
            "problems": run.dataset.problems,
            "n_items": len(run.dataset.items),
        },
        "frame_cache": {
            "recorded": run.cache_recorded,
            "root": str(run.cache_root) if run.cache_root else None,
            "exists": bool(run.cache_root and run.cache_root.is_dir()),
        },
        "manifest_extra": {k: jsonable(v) for k, v in raw.items() if k not in _MANIFEST_SHOWN},
        "manifest_json": json.dumps(raw, indent=2, ensure_ascii=False),
        "progress": {
            "selected": selected,
            "answered": answered,
            "prediction_lines": run.files.prediction_lines,
            "scored": sum(1 for (_, sample) in run.files.item_scores if sample == 0),
            "has_scores": run.files.scores is not None,
            "partial_tail": run.files.partial_tail,
            "complete": summary.get("complete"),
        },
        "notes": [str(n) for n in summary.get("notes", []) if n]
        if isinstance(summary.get("notes"), list)
        else [],
        "problems": run.files.problems,
        "counts": counts,
        "score_counts": _score_counts(scores),
    }


def _sent_summary(run: RunView) -> dict[str, Any]:
    """What was actually sent, over every prediction: each key with its distinct values and counts."""
    values: dict[str, Counter[str]] = {}
    recorded = 0
    total = 0
    for record in run.files.predictions.values():
        total += 1
        sent = record.model.sent
        if not sent:
            continue
        recorded += 1
        for key, value in sent.items():
            text = "not sent" if value is None else json.dumps(value, ensure_ascii=False)
            values.setdefault(key, Counter())[text] += 1
    return {
        "total": total,
        "recorded": recorded,
        "keys": {key: counter.most_common() for key, counter in sorted(values.items())},
    }


def _outcome_counts(rows: dict[str, Any]) -> list[dict[str, Any]]:
    """Per run: {task: {outcome: n}}, flags (truncated, refusal) and failures by kind, plus totals."""
    result = []
    for index, _ in enumerate(rows["runs"]):
        by_task: dict[str, Counter[str]] = {}
        total: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        for row in rows["rows"]:
            cell = row["r"][index]
            counter = by_task.setdefault(row["t"], Counter())
            counter[cell["o"]] += 1
            counter["all"] += 1
            total[cell["o"]] += 1
            total["all"] += 1
            for flag, name in (("T", "truncated"), ("R", "refusal")):
                if flag in cell.get("f", ""):
                    counter[name] += 1
                    total[name] += 1
            if "k" in cell:
                kinds[cell["k"]] += 1
        result.append(
            {"by_task": {t: dict(c) for t, c in by_task.items()}, "total": dict(total), "kinds": dict(kinds)}
        )
    return result


def _score_counts(scores: dict[str, Any]) -> dict[str, Any]:
    """scores.json's own per-task counts, every `n_*` field and `failed_by_kind`, whatever they are."""
    tasks = _dict(scores.get("tasks"))
    columns: list[str] = []
    table: dict[str, dict[str, Any]] = {}
    for task, entry in tasks.items():
        if not isinstance(entry, dict):
            continue
        row = {}
        for key, value in entry.items():
            if key == "n" or key.startswith("n_"):
                row[key] = value
                if key not in columns:
                    columns.append(key)
        kinds = entry.get("failed_by_kind")
        if isinstance(kinds, dict) and kinds:
            row["failed_by_kind"] = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
            if "failed_by_kind" not in columns:
                columns.append("failed_by_kind")
        table[task] = row
    return {"columns": columns, "rows": table}


def _table(session: ViewSession) -> tuple[Table | None, str | None]:
    loaded: list[LoadedRun] = []
    missing = []
    for run in session.runs:
        if run.files.scores is None:
            missing.append(run.label)
            continue
        try:
            scores = RunScores.model_validate(run.files.scores)
        except ValidationError as error:
            missing.append(f"{run.label} (scores.json unreadable: {error.errors()[0]['msg']})")
            continue
        loaded.append(LoadedRun(RunDir(run.root), scores, run.label))
    suite = next((run.dataset.suite for run in session.runs if run.dataset.suite is not None), None)
    note = f"not scored yet: {', '.join(missing)}" if missing else None
    if not loaded or suite is None:
        return None, note
    return build_table(suite, loaded, None), note


def disagree(cells: list[dict[str, Any]]) -> bool:
    """The list's "runs disagree" rule: runs that answered differ in outcome or in the answer read."""
    answered = [cell for cell in cells if cell["o"] not in ("absent", "pending")]
    return any(cell["o"] != answered[0]["o"] or cell["a"] != answered[0]["a"] for cell in answered[1:])


def _pairs(rows: dict[str, Any], session: ViewSession) -> list[dict[str, Any]]:
    """Each run against the first: every item in exactly one of both right, only one right, neither,
    or not comparable (one run has no score for it), so the counts sum to the items; and, apart,
    how many of them the list's "runs disagree" filter shows for the pair (a subset, counted again)."""
    pairs = []
    first = session.runs[0]
    for other in range(1, len(session.runs)):
        second = session.runs[other]
        names = ["both correct", f"only {first.label}", f"only {second.label}", "neither", "not comparable"]
        counts = dict.fromkeys(names, 0)
        disagreeing = 0
        for row in rows["rows"]:
            a, b = row["r"][0], row["r"][other]
            disagreeing += disagree([a, b])
            if {a["o"], b["o"]} & {"pending", "unscored", "absent"}:
                counts["not comparable"] += 1
                continue
            right_a, right_b = a["o"] == "correct", b["o"] == "correct"
            both, only_a, only_b, neither = names[:4]
            counts[
                both if right_a and right_b else only_a if right_a else only_b if right_b else neither
            ] += 1
        pairs.append(
            {
                "a": first.label,
                "b": second.label,
                "a_spec": first.spec,
                "b_spec": second.spec,
                "counts": counts,
                "total": len(rows["rows"]),
                "disagree": disagreeing,
            }
        )
    return pairs
