"""The build report: `build_report.json` (for tools) and `build_report.md` (for people).

Sections: models and settings; calls, tokens and estimated cost (this run, and the whole build
including cached replies); curation (kept, and each rejection with its reasons); items per task
(kept, and drafts dropped by reason); flags per task; answer-position balance and option-length bias
per task; every problem skipped along the way (experiment, stage, message).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from expvid.construction.progress import PHASES
from expvid.suites.expvid_suite import EXPVID_TASKS

if TYPE_CHECKING:
    from expvid.construction.context import BuildContext


def phases_section(context: BuildContext) -> dict[str, dict[str, Any]]:
    """Per build phase: wall time (first start to last end), model calls and tokens (all roles)."""
    seconds = context.clock.seconds()
    spans = context.clock.spans()
    names = [p for p in PHASES if p in seconds or p in context.ledger.phases]
    names += sorted(set(seconds) | set(context.ledger.phases) - set(names))
    section: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(names):
        counts = asdict(context.ledger.phases[name]) if name in context.ledger.phases else {}
        section[name] = {
            "wall_seconds": seconds.get(name),
            "starts_at_s": spans[name][0] if name in spans else None,
            "ends_at_s": spans[name][1] if name in spans else None,
            "calls_sent": counts.get("requests", 0),
            "cache_hits": counts.get("cache_hits", 0),
            "prompt_tokens": counts.get("prompt_tokens", 0),
            "completion_tokens": counts.get("completion_tokens", 0),
            "cached_prompt_tokens": counts.get("cached_prompt_tokens", 0),
            "cached_completion_tokens": counts.get("cached_completion_tokens", 0),
            "failures": counts.get("failures", 0),
        }
    return section


def items_section(
    finals_by_task: Counter[str], dropped: dict[str, dict[str, int]]
) -> dict[str, dict[str, Any]]:
    section: dict[str, dict[str, Any]] = {}
    for spec in EXPVID_TASKS:
        section[spec.name] = {"kept": finals_by_task.get(spec.name, 0), "dropped": dropped.get(spec.name, {})}
    for name, reasons in sorted(dropped.items()):
        if name not in section:
            section[name] = {"kept": None, "dropped": reasons}
    return section


def flags_section(flags: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, int]]:
    counts: dict[str, Counter[str]] = {}
    for key, entries in flags.items():
        task = key.split("/", 1)[0]
        for entry in entries:
            counts.setdefault(task, Counter())[entry["kind"]] += 1
    return {task: dict(sorted(c.items())) for task, c in sorted(counts.items())}


def markdown_report(report: dict[str, Any]) -> str:
    lines = ["# expvid build report", ""]
    lines.append(
        f"Sources: `{report['sources']}` -> candidates: `{report['out']}` ({report['seconds']:.1f} s)"
    )
    models = report["models"]
    lines.append("Models: " + ", ".join(f"{role} = `{name}`" for role, name in models.items() if name))
    lines.append("")
    calls, tokens, cost = report["calls"], report["tokens"], report["cost"]
    lines += [
        "## Model calls",
        "",
        f"- sent: {calls['sent']}; served from the cache: {calls['cache_hits']}",
        f"- invalid replies (bad JSON, refusals, rule breaks): {calls['invalid_replies']}; "
        f"re-asked: {calls['retries']}; failed for good: {calls['failures']}",
        f"- tokens this run: {tokens['prompt']} in, {tokens['completion']} out "
        f"(reasoning {tokens['reasoning']}); from the cache: {tokens['cached_prompt']} in, "
        f"{tokens['cached_completion']} out",
        f"- estimated cost: this run {_money(cost['this_run'])}"
        + (
            f" (model tokens {_money(cost['tokens_this_run'])} + speech-to-text {_money(cost['speech_this_run'])})"
            if "speech_this_run" in cost
            else ""
        )
        + f"; this run's replies without the cache "
        f"{_money(cost['including_cached'])}; all finished runs of this directory "
        f"{_money(cost['all_runs'])} over {cost['runs']} run(s) ({cost['note']})",
        "",
        "| stage | sent | cached | invalid | retries | failures | tokens in | tokens out |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for stage, c in calls["by_stage"].items():
        lines.append(
            f"| {stage} | {c['requests']} | {c['cache_hits']} | {c['invalid_replies']} | {c['retries']} | "
            f"{c['failures']} | {c['prompt_tokens'] + c['cached_prompt_tokens']} | "
            f"{c['completion_tokens'] + c['cached_completion_tokens']} |"
        )
    lines += speech_lines(report.get("speech"))
    curation = report["curation"]
    lines += [
        "",
        "## Curation",
        "",
        f"Kept {len(curation['kept'])}: {', '.join(curation['kept']) or '-'}",
        "",
    ]
    for video_id, reasons in curation["rejected"].items():
        lines.append(f"- rejected {video_id}: {'; '.join(reasons)}")
    lines += [
        "",
        "## Items",
        "",
        "| task | kept | dropped (reason: count) | flags |",
        "| --- | ---: | --- | --- |",
    ]
    flags = report["flags"]
    for task, entry in report["items"].items():
        dropped = ", ".join(f"{r}: {n}" for r, n in entry["dropped"].items()) or "-"
        task_flags = ", ".join(f"{k}: {n}" for k, n in flags.get(task, {}).items()) or "-"
        kept = "-" if entry["kept"] is None else entry["kept"]
        lines.append(f"| {task} | {kept} | {dropped} | {task_flags} |")
    lines += ["", f"Total items: {report['total_items']}", "", "## Answer balance and option length", ""]
    for task, entry in report["balance"].items():
        parts = [f"letters {entry['answer_letters']}"]
        if "chi_square_p" in entry:
            parts.append(f"chi-square p {entry['chi_square_p']}")
        if "last_option_share" in entry:
            parts.append(f"answer is the last option in {entry['last_option_share']:.0%}")
        if "correct_is_longest" in entry:
            parts.append(
                f"correct option longest in {entry['correct_is_longest']:.0%} (chance {entry['chance_longest']:.0%}), "
                f"mean length ratio {entry['mean_length_ratio']}"
            )
        lines.append(f"- {task} (n={entry['n']}): " + "; ".join(parts))
    solvers = report.get("ordering_solvers") or {}
    if solvers:
        lines += [
            "",
            "## Step ordering: solvers that see only the options",
            "",
            f"{len(solvers['accuracy'])} solvers (no video, no step text) on {solvers['items']} item(s): best "
            f"expected accuracy {solvers['best']:.2f} (chance {solvers['chance']:.2f}) by "
            + ", ".join(solvers["best_solvers"][:5])
            + ("" if len(solvers["best_solvers"]) <= 5 else f" and {len(solvers['best_solvers']) - 5} more"),
        ]
    lines += [
        "",
        "## Stages",
        "",
        "| stage | wall (s) | calls sent | from cache | tokens in | tokens out | failures |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, phase in report.get("phases", {}).items():
        wall = "-" if phase["wall_seconds"] is None else f"{phase['wall_seconds']:.1f}"
        lines.append(
            f"| {name} | {wall} | {phase['calls_sent']} | {phase['cache_hits']} | "
            f"{phase['prompt_tokens'] + phase['cached_prompt_tokens']} | "
            f"{phase['completion_tokens'] + phase['cached_completion_tokens']} | {phase['failures']} |"
        )
    clips = report.get("clips")
    if clips:
        passes = "-" if clips["decode_passes"] is None else f"{clips['decode_passes']:.2f}"
        threads = "automatic" if clips.get("encoder_threads") == 0 else clips.get("encoder_threads", 1)
        lines += [
            "",
            f"- clips: {clips['clips_cut']} cut from {clips['videos']} video(s) with {clips['jobs']} worker "
            f"process(es), {threads} encoder thread(s) per clip, one decode pass per video ({passes} frames "
            f"decoded per frame of video); {clips['worker_seconds']:.1f} s in the workers, "
            f"{clips['wall_seconds']:.1f} s of wall time (wall-time ratios of --jobs: benchmarks/build_clips.py)",
        ]
    stages = report["stages"]
    lines.append(
        f"- stage outputs reused from the state directory: {stages['reused']}; computed: {stages['computed']}; "
        f"clips cut: {stages['clips_cut']}, reused: {stages['clips_reused']}"
    )
    for video_id, note in report.get("level3_video", {}).items():
        lines.append(f"- Level-3 video {video_id}: {note}")
    failed = report.get("failed_units", [])
    if failed:
        lines += ["", f"## Failed units ({len(failed)}): asked again by the next run", ""]
        for p in failed:
            lines.append(f"- {p.get('video_id') or '-'} / {p['stage']}: {p['message']}")
    problems = report["problems"]
    lines += ["", f"## Problems ({len(problems)})", ""]
    for p in problems:
        retry = " (will be retried on the next run)" if p.get("transient") else ""
        lines.append(f"- {p.get('video_id') or '-'} / {p['stage']}: {p['message']}{retry}")
    if report.get("notes"):
        lines += ["", "## Notes", ""]
    for where, notes_of_stage in report.get("notes", {}).items():
        for key, values in notes_of_stage.items():
            for value in values if isinstance(values, list) else [values]:
                lines.append(f"- {where} ({key.replace('_', ' ')}): {value}")
    notes = report.get("audit_notes", [])
    if notes:
        lines += ["", "## Audit notes", ""] + [f"- {n}" for n in notes[:50]]
    return "\n".join(lines) + "\n"


def speech_lines(speech: dict[str, Any] | None) -> list[str]:
    """The speech-to-text part of the Markdown report (nothing when the build had no engine)."""
    if not speech:
        return []
    engine = speech.get("engine") or {}
    transcribed = speech.get("transcribed") or []
    return [
        "",
        "## Speech-to-text",
        "",
        f"- engine: {engine.get('engine')} `{engine.get('model')}`"
        + (f", language {engine['language_requested']}" if engine.get("language_requested") else ""),
        f"- transcribed this run: {speech['transcribed_this_run']} video(s), {speech['minutes']} min of audio, "
        f"{speech['requests']} request(s) ({speech['retries']} retried); from the transcript cache: "
        f"{speech['cache_hits']} ({speech['cached_audio_seconds'] / 60:.2f} min); failed: {speech['failures']}",
        f"- cost: this run {_money(speech['cost_this_run'])}; without the cache "
        f"{_money(speech['cost_including_cached'])}"
        + ("" if speech.get("price_per_minute") is not None else " (no price per minute given)"),
        f"- experiments whose transcript is speech-to-text: {', '.join(transcribed) or '-'}",
    ]


def speech_section(speech: Any, settings: Any, transcribed: list[str]) -> dict[str, Any] | None:
    """The report's `speech` section from a `SpeechStage` (None when the build had no engine)."""
    if speech is None:
        return None
    section: dict[str, Any] = speech.ledger.as_dict(settings)
    section["transcribed_this_run"] = section.pop("transcribed")
    section["transcribed"] = sorted(transcribed)
    return section


def add_speech_cost(cost: dict[str, Any], speech: dict[str, Any] | None) -> None:
    """Fold transcription into the report's `cost` (unknown stays unknown, never 0), keeping the parts."""
    if speech is None:
        return
    cost["tokens_this_run"] = cost["this_run"]
    cost["speech_this_run"] = speech["cost_this_run"]
    for key, part in (("this_run", "cost_this_run"), ("including_cached", "cost_including_cached")):
        tokens, audio = cost[key], speech[part]
        cost[key] = None if tokens is None or audio is None else round(tokens + audio, 6)


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"
