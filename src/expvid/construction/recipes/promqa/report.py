"""`build_report.md` of the ProMQA recipe: what was made, asked, spent and what failed."""

from __future__ import annotations

from typing import Any


def _money(value: float | None) -> str:
    return "unknown (no price)" if value is None else f"${value:.4f}"


def markdown_report(report: dict[str, Any]) -> str:
    lines = ["# ProMQA build report", ""]
    corpus = report["corpus"]
    lines += [
        f"- recordings: {corpus['recordings']} ({corpus['with_video']} with a video), recipes: {corpus['recipes']}",
        f"- examples made: {report['examples']['total']} "
        + ", ".join(f"{k} {v}" for k, v in report["examples"]["made"].items()),
        f"- sampled: {report['sampling']['total']}; candidates written: {report['total_items']}",
        f"- model calls sent: {report['calls']['sent']}, from the cache: {report['calls']['cache_hits']}, "
        f"invalid replies: {report['calls']['invalid_replies']}, failed: {report['calls']['failures']}",
        f"- tokens: {report['tokens']['prompt']} prompt, {report['tokens']['completion']} completion; "
        f"est. cost this run {_money(report['cost']['this_run'])}, without the cache "
        f"{_money(report['cost']['including_cached'])}",
        f"- generation wall time: {report['generation']['seconds']:.1f} s; clips: {report['clips']['clips']} cut, "
        f"{report['clips']['reused']} reused",
        "",
        "## Examples skipped (B.1)",
        "",
        "| reason | count |",
        "| --- | ---: |",
    ]
    lines += [f"| {reason} | {count} |" for reason, count in sorted(report["examples"]["skipped"].items())]
    lines += ["", "## Sampled per type", "", "| type | group | count |", "| --- | --- | ---: |"]
    for kind, cells in report["sampling"]["sampled"].items():
        lines += [f"| {kind} | {cell} | {count} |" for cell, count in sorted(cells.items())]
    lines += [
        "",
        "## Generations",
        "",
        "| template | generator | asked | generated | pairs |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for combo, counts in report["generation"]["combinations"].items():
        template, _, generator = combo.partition(" | ")
        lines.append(
            f"| {template} | {generator} | {counts.get('asked', 0)} | {counts.get('generated', 0)} | "
            f"{counts.get('pairs', 0)} |"
        )
    if corpus["without_video"]:
        lines += ["", f"Recordings without a video (skipped): {', '.join(corpus['without_video'])}"]
    if corpus.get("excluded"):
        lines += ["", "## Recordings left out", ""]
        lines += [f"- {recording}: {why}" for recording, why in corpus["excluded"].items()]
    fixes = corpus.get("corrections")
    if fixes is not None:
        lines += ["", "## Hand corrections", "", f"- {fixes['applied']} applied from {fixes['file']} "
                  f"({len(fixes['recordings'])} recording(s)); {fixes['not_in_corpus']} name recordings not in "
                  "the corpus"]  # fmt: skip
        lines += [f"- not applied: {p}" for p in fixes["not_applied"]]
    if corpus["problems"]:
        lines += ["", "## Annotation records not read", ""] + [f"- {p}" for p in corpus["problems"]]
    if corpus.get("warnings"):
        lines += ["", "## Annotation warnings", ""] + [f"- {w}" for w in corpus["warnings"]]
    if report["failed_units"]:
        lines += ["", "## Failed units (asked again by the next run)", ""]
        lines += [f"- {u.get('unit', u.get('stage'))}: {u['message']}" for u in report["failed_units"]]
    return "\n".join(lines) + "\n"
