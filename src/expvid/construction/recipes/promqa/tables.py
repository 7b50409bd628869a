"""The paper's tables about its own construction, computed from a verification campaign.

Input: the campaign (one row per generated item, as `expvid platform export --format promqa` writes
it to `campaign.jsonl`: type, template, generator, settlement, the two judgements with their review
times, the adjudication and the final fields) and the build reports of the candidate directories
(counted generation calls, tokens, cost and wall time). Output, each with where it comes from:

- Table 13 / Figure 2 (left): question approval per question type, "#after / #before verification";
- Table 6: approval per prompt template (recording as frames | step descriptions x recipe as
  DOT | image | excerpt), Table 7: per generator, and every template x generator cell;
- Figure 2 (right): final answers per type by source (machine, annotator, adjudicator);
- Figure 3: examples with only machine answers, only human answers, or both;
- Figure 4: examples by answer-type combination (direct, suggestion, intervention), when a person
  has labelled the final answers (`answer_types.csv`; the paper had one annotator do it);
- judgement agreement per annotator pair on questions and on answers, and its mean (3.3: 0.87);
- Table 5: the cost of generating the items with the LLM (counted calls x prices, generation wall
  time) against writing them by hand (`human_minutes_per_qa`, default 4.8: 50 QAs in 4 hours,
  A.3, at `hourly_rate` USD, default 20), plus the verification time measured on the platform
  (both approaches need it; the paper compares creation only).

"Approved" is an item that reached the release (its question judged valid and at least one answer
correct); "question valid" counts the question judgement alone.
"""

from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from expvid.construction.recipes.promqa.examples import QUESTION_TYPES
from expvid.construction.recipes.promqa.prompting import TABLE6_CELLS
from expvid.suites.promqa.spec import ANSWER_TYPE_GROUPS, answer_type_group

SETTLED = ("verified", "rejected")
ANSWER_TYPES = ("direct", "suggestion", "intervention")
#: Figure 4's combinations, in its order.
TYPE_GROUPS = ANSWER_TYPE_GROUPS


def _rate(approved: int, total: int) -> dict[str, Any]:
    return {"approved": approved, "total": total, "rate": round(approved / total, 3) if total else None}


def _approval(rows: Iterable[Mapping[str, Any]], key: Any) -> dict[str, dict[str, Any]]:
    approved: Counter[Any] = Counter()
    valid: Counter[Any] = Counter()
    total: Counter[Any] = Counter()
    for row in rows:
        if row.get("state") not in SETTLED:
            continue
        group = key(row)
        total[group] += 1
        approved[group] += row["state"] == "verified"
        valid[group] += bool(row.get("question_valid"))
    return {
        str(group): {
            **_rate(approved[group], total[group]),
            "question_valid": _rate(valid[group], total[group]),
        }
        for group in sorted(total, key=str)
    }


def answer_source(tags: list[str]) -> str:
    machine = "machine" in tags
    human = any(t in ("annotator", "adjudicator") for t in tags)
    return "both" if machine and human else "machine" if machine else "human"


def type_group(types: Iterable[str]) -> str:
    """Figure 4's category of an example from its answers' types (the suite's Table 11 columns)."""
    return answer_type_group(list(types)) or "unlabelled"


def read_answer_types(path: Path) -> dict[tuple[str, int], str]:
    """`answer_types.csv` (question_id, answer_index, answer, source, type) -> labels; errors name the line."""
    labels: dict[tuple[str, int], str] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for line, row in enumerate(csv.DictReader(handle), start=2):
            kind = (row.get("type") or "").strip().lower()
            if not kind:
                continue
            if kind not in ANSWER_TYPES:
                raise ValueError(f"{path}:{line}: type {kind!r} is not one of {', '.join(ANSWER_TYPES)}")
            try:
                labels[(row["question_id"], int(row["answer_index"]))] = kind
            except (KeyError, ValueError):
                raise ValueError(f"{path}:{line}: needs question_id and a numeric answer_index") from None
    return labels


def write_answer_types_template(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """One line per final answer of every approved item, `type` left for a person to fill."""
    count = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question_id", "answer_index", "answer", "source", "type"])
        for row in rows:
            final = row.get("final") or {}
            for index, (answer, tag) in enumerate(
                zip(final.get("answers", []), final.get("answer_tags", []), strict=True)
            ):
                writer.writerow([row["question_id"], index, answer, tag, ""])
                count += 1
    return count


def _agreement(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per annotator pair: share of shared items judged alike (question), and of answers judged alike."""
    pairs: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: {"question": [], "answers": []})
    for row in rows:
        verification = row.get("verification")
        names = row.get("annotators") or []
        if not verification or len(names) != 2:
            continue
        first, second = verification["judges"]
        pair = tuple(sorted(names))
        pairs[pair]["question"].append(int(first["question"] == second["question"]))
        if first["question"] and second["question"]:
            pairs[pair]["answers"] += [
                int(a == b) for a, b in zip(first["answers"], second["answers"], strict=True)
            ]
    by_pair: list[dict[str, Any]] = []
    for pair, votes in sorted(pairs.items()):
        by_pair.append(
            {
                "annotators": list(pair),
                "items": len(votes["question"]),
                "question": round(statistics.fmean(votes["question"]), 3) if votes["question"] else None,
                "answers": round(statistics.fmean(votes["answers"]), 3) if votes["answers"] else None,
            }
        )

    def mean(field: str) -> float | None:
        values = [float(p[field]) for p in by_pair if p[field] is not None]
        return round(statistics.fmean(values), 3) if values else None

    return {"by_pair": by_pair, "mean_question": mean("question"), "mean_answers": mean("answers")}


def _cost(rows: Sequence[Mapping[str, Any]], builds: Sequence[Mapping[str, Any]], minutes_per_qa: float,
          hourly_rate: float) -> dict[str, Any]:  # fmt: skip
    generated = len(rows)
    llm_cost: float | None = 0.0
    llm_seconds = 0.0
    calls = 0
    for report in builds:
        cost = report.get("cost", {}).get("including_cached")
        llm_cost = None if cost is None or llm_cost is None else llm_cost + cost
        llm_seconds += float(report.get("generation", {}).get("seconds") or 0.0)
        calls += int(report.get("calls", {}).get("sent", 0)) + int(
            report.get("calls", {}).get("cache_hits", 0)
        )
    human_hours = generated * minutes_per_qa / 60.0
    review = [s for row in rows for s in row.get("decision_seconds") or [] if s is not None]
    adjudication = [
        row["adjudication_seconds"] for row in rows if row.get("adjudication_seconds") is not None
    ]
    verification_hours = (sum(review) + sum(adjudication)) / 3600.0
    return {
        "items_generated": generated,
        "ours": {
            "usd": None if llm_cost is None else round(llm_cost, 6),
            "hours": round(llm_seconds / 3600.0, 4),
            "calls": calls,
            "basis": "counted generation calls x the given prices; generation wall time",
        },
        "human_estimate": {
            "usd": round(human_hours * hourly_rate, 2),
            "hours": round(human_hours, 2),
            "basis": f"{minutes_per_qa:g} min per QA written from scratch (A.3: 50 in 4 h) at {hourly_rate:g} USD/h",
        },
        "verification_measured": {
            "hours": round(verification_hours, 4),
            "usd": round(verification_hours * hourly_rate, 2),
            "judgements": len(review),
            "adjudications": len(adjudication),
            "median_seconds_per_judgement": round(statistics.median(review), 1) if review else None,
            "basis": "time from opening an item to saving the judgement, and from opening to resolving "
            "an adjudication, at the same hourly rate",
        },
    }


def construction_tables(
    rows: Sequence[Mapping[str, Any]],
    builds: Sequence[Mapping[str, Any]],
    *,
    minutes_per_qa: float = 4.8,
    hourly_rate: float = 20.0,
    answer_types: Mapping[tuple[str, int], str] | None = None,
) -> dict[str, Any]:
    settled = [r for r in rows if r.get("state") in SETTLED]
    approved = [r for r in settled if r["state"] == "verified"]
    sources_by_type: dict[str, Counter[str]] = defaultdict(Counter)
    for row in approved:
        for tag in (row.get("final") or {}).get("answer_tags", []):
            sources_by_type[row["type"]][tag] += 1
    figure3 = Counter(answer_source((r.get("final") or {}).get("answer_tags", [])) for r in approved)
    figure4: Counter[str] | None = None
    if answer_types is not None:
        figure4 = Counter()
        for row in approved:
            answers = (row.get("final") or {}).get("answers", [])
            labels = [answer_types.get((row["question_id"], i)) for i in range(len(answers))]
            figure4["unlabelled" if None in labels else type_group(t for t in labels if t)] += 1
    by_type = _approval(settled, lambda r: r["type"])
    table6 = {
        template: {"recording": cell[0], "recipe": cell[1], **values}
        for template, values in _approval(settled, lambda r: r.get("template")).items()
        if (cell := TABLE6_CELLS.get(template))
    }
    return {
        "items": {
            "generated": len(rows),
            "settled": len(settled),
            "approved": len(approved),
            "open": len(rows) - len(settled),
        },
        "table13_by_type": {kind: by_type[kind] for kind in QUESTION_TYPES if kind in by_type},
        "overall": _rate(len(approved), len(settled)),
        "table6_by_template": table6,
        "table7_by_generator": _approval(settled, lambda r: r.get("generator")),
        "by_template_and_generator": _approval(
            settled, lambda r: f"{r.get('template')} | {r.get('generator')}"
        ),
        "figure2_answers_by_source": {k: dict(v) for k, v in sorted(sources_by_type.items())},
        "figure3_answer_source": {k: figure3.get(k, 0) for k in ("machine", "human", "both")},
        "figure4_answer_types": None
        if figure4 is None
        else {k: figure4.get(k, 0) for k in (*TYPE_GROUPS, "unlabelled")},
        "agreement": _agreement(rows),
        "table5_cost": _cost(list(rows), builds, minutes_per_qa, hourly_rate),
        "settled_via": dict(Counter(r.get("settled_via") or "open" for r in rows)),
    }


def _row(cells: Iterable[Any]) -> str:
    return "| " + " | ".join("-" if c is None else str(c) for c in cells) + " |"


def _fraction(value: Mapping[str, Any]) -> str:
    rate = value["rate"]
    return "-" if rate is None else f"{rate:.2f} ({value['approved']}/{value['total']})"


def tables_markdown(tables: Mapping[str, Any]) -> str:
    lines = ["# ProMQA construction tables", ""]
    items = tables["items"]
    lines += [f"{items['generated']} items generated, {items['settled']} settled, {items['approved']} in the release, "
              f"{items['open']} still open. Approved = question valid and at least one correct answer.", ""]  # fmt: skip
    by_type = tables["table13_by_type"]
    lines += ["## Table 13: approval per question type", "", _row([*by_type, "Avg."]),
              _row(["---"] * (len(by_type) + 1)),
              _row([*(_fraction(v) for v in by_type.values()), _fraction(tables["overall"])]), ""]  # fmt: skip
    lines += [
        "## Table 6: approval per prompt template",
        "",
        "| recording | DOT | image | excerpt |",
        "| --- | --- | --- | --- |",
    ]
    for recording in ("frames", "step"):
        cells = []
        for recipe in ("DOT", "image", "excerpt"):
            found = next((v for v in tables["table6_by_template"].values()
                          if v["recording"] == recording and v["recipe"] == recipe), None)  # fmt: skip
            cells.append(_fraction(found) if found else "-")
        lines.append(_row([recording, *cells]))
    lines += [
        "",
        "## Table 7: approval per generator",
        "",
        "| generator | approval | question valid |",
        "| --- | --- | --- |",
    ]
    lines += [
        _row([g, _fraction(v), _fraction(v["question_valid"])])
        for g, v in tables["table7_by_generator"].items()
    ]
    lines += ["", "## Figure 3: examples by answer source", "", "| machine only | human only | both |", "| --- | --- | --- |",
              _row(tables["figure3_answer_source"].values()), ""]  # fmt: skip
    lines += ["## Figure 2: final answers per type by source", "", "| type | machine | annotator | adjudicator |",
              "| --- | --- | --- | --- |"]  # fmt: skip
    for kind, counts in tables["figure2_answers_by_source"].items():
        lines.append(
            _row([kind, counts.get("machine", 0), counts.get("annotator", 0), counts.get("adjudicator", 0)])
        )
    figure4 = tables["figure4_answer_types"]
    lines += ["", "## Figure 4: examples by answer type", ""]
    if figure4 is None:
        lines.append(
            "Not labelled: fill the `type` column of answer_types.csv (direct, suggestion, intervention)."
        )
    else:
        lines += [_row(figure4), _row(["---"] * len(figure4)), _row(figure4.values())]
    agreement = tables["agreement"]
    lines += ["", "## Judgement agreement (3.3)", "",
              f"Mean over annotator pairs: questions {agreement['mean_question']}, answers {agreement['mean_answers']}.", ""]  # fmt: skip
    cost = tables["table5_cost"]
    ours, human, review = cost["ours"], cost["human_estimate"], cost["verification_measured"]
    usd = "unknown (no price)" if ours["usd"] is None else f"{ours['usd']:.4f} USD"
    lines += [f"## Table 5: cost of creating {cost['items_generated']} QA pairs", "", "| | Ours | Human (est.) |", "| --- | --- | --- |",
              _row(["Cost / Hour", f"{usd} / {ours['hours']:.4f} h", f"{human['usd']:.2f} USD / {human['hours']:.2f} h"]),
              "", f"- ours: {ours['basis']} ({ours['calls']} calls)", f"- human: {human['basis']}",
              f"- verification (both approaches, measured): {review['hours']:.4f} h, {review['usd']:.2f} USD "
              f"({review['judgements']} judgements, {review['adjudications']} adjudications)"]  # fmt: skip
    return "\n".join(lines) + "\n"
