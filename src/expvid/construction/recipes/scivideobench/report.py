"""`build_report.md` of the SciVideoBench recipe: what was made, dropped, flagged, asked and paid."""

from __future__ import annotations

from typing import Any


def _money(value: float | None) -> str:
    return "unknown (no price given)" if value is None else f"${value:.4f}"


def markdown_report(report: dict[str, Any]) -> str:
    lines = ["# SciVideoBench recipe: build report", ""]
    lines.append(
        f"{report['total_items']} item(s) from {report['experiments']['found']} experiment(s) in {report['seconds']} s."
    )
    lines += ["", "| type | kept | dropped |", "| --- | ---: | --- |"]
    for task, entry in report["items"].items():
        dropped = ", ".join(f"{reason}: {n}" for reason, n in entry["dropped"].items()) or "-"
        lines.append(f"| {task} | {entry['kept']} | {dropped} |")
    calls = report["calls"]
    lines += [
        "",
        f"Model calls: {calls['sent']} sent, {calls['cache_hits']} from the cache, {calls['invalid_replies']} "
        f"invalid replies, {calls['failures']} failed.",
    ]
    lines.append("")
    lines.append("| role:stage | sent | cached | prompt tokens | completion tokens |")
    lines.append("| --- | ---: | ---: | ---: | ---: |")
    for stage, counts in calls["by_stage"].items():
        lines.append(
            f"| {stage} | {counts['requests']} | {counts['cache_hits']} | {counts['prompt_tokens']} | {counts['completion_tokens']} |"
        )
    speech = report.get("speech")
    if speech:
        lines += [
            "",
            f"Speech-to-text ({speech['engine']['engine']}, {speech['engine']['model']}): {speech['transcribed']} "
            f"transcribed ({speech['minutes']} min), {speech['cache_hits']} from the cache, {speech['failures']} failed; "
            f"cost {_money(speech['cost_this_run'])}.",
        ]
    total = report["total_cost"]
    per = report["per_item"]
    lines += [
        "",
        f"Cost this run: {_money(total['this_run'])} (tokens {_money(total['tokens'])}, speech {_money(total['speech'])}).",
        f"Per released item: {per['calls']} calls, {per['tokens']} tokens, {_money(per['cost_this_run'])}.",
        "",
    ]
    lines.append("Prompts (expvid's own; SciVideoBench does not publish its prompts):")
    lines += [
        f"- {pid}: {entry['sha256'][:12]} ({entry['source']})" for pid, entry in report["prompts"].items()
    ]
    if report["flags"]:
        lines += ["", "Audit flags: " + ", ".join(f"{k} {v}" for k, v in report["flags"].items())]
    lines += ["", "Answer letters: " + ", ".join(f"{k} {v}" for k, v in report["answer_letters"].items())]
    if report["experiments"]["rejected"]:
        lines += ["", "## Rejected experiments", ""]
        for video_id, reasons in report["experiments"]["rejected"].items():
            lines += [f"- {video_id}: {'; '.join(reasons)}"]
    if report["failed_units"]:
        lines += ["", "## Failed units (asked again by the next run)", ""]
        lines += [f"- {p['video_id']} {p['stage']}: {p['message']}" for p in report["failed_units"]]
    return "\n".join(lines) + "\n"
