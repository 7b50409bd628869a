"""`build_scivideobench(config)`: sources in, a SciVideoBench-format candidate directory out.

Order: discover experiments -> speech-to-text where a transcript is missing (cached by audio
content) -> per experiment, QA generator -> evaluator -> visual comparer -> refiner (each a saved,
counted stage; experiments run side by side) -> records with content-derived ids and letters ->
audits (blind answerability with the official prompt, narration leakage, option length) -> files
and `build_report.{json,md}`. A failed unit is recorded and skipped (the command exits 1 and the
next run asks exactly those again); only bad arguments stop a build before it starts.
`estimate_scivideobench(config)` is `--dry-run`: calls, tokens, audio minutes and cost, nothing asked.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from expvid.construction.accounting import Ledger
from expvid.construction.audits import AuditResult
from expvid.construction.drafts import Problem
from expvid.construction.llm import LLMClient
from expvid.construction.prompts import PromptError
from expvid.construction.recipes.scivideobench import prompts as recipe_prompts
from expvid.construction.recipes.scivideobench.audits import blind_audit, text_audits
from expvid.construction.recipes.scivideobench.config import REDO_PHASES, SvbBuildConfig, backend_options
from expvid.construction.recipes.scivideobench.disciplines import DisciplineMap
from expvid.construction.recipes.scivideobench.drafts import RoleOutput, RoleStore, SvbDraft
from expvid.construction.recipes.scivideobench.estimate import estimate
from expvid.construction.recipes.scivideobench.exemplars import load_exemplars
from expvid.construction.recipes.scivideobench.inputs import Experiment, load_experiment
from expvid.construction.recipes.scivideobench.option_checks import TwinCheck
from expvid.construction.recipes.scivideobench.report import markdown_report
from expvid.construction.recipes.scivideobench.roles import Roles
from expvid.construction.recipes.scivideobench.writer import write_release
from expvid.construction.retries import CURRENT_EXPERIMENT, RetryBook
from expvid.construction.sources import discover_sources
from expvid.construction.speech.sources import fill_transcripts, open_stage
from expvid.construction.speech.stage import SpeechStage
from expvid.construction.state import STATE_DIR, BuildState, check_out_dir, write_atomic
from expvid.models import ModelBackend, create_backend
from expvid.schema import DataError
from expvid.suites.scivideobench.loader import record_to_item

Log = Callable[[str], None]


def _prices(config: SvbBuildConfig) -> dict[str, Any]:
    prices = dict(config.prices)
    if "blind" not in prices and "llm" in prices and config.blind_llm in (None, config.llm):
        prices["blind"] = prices["llm"]
    return prices


async def _experiments(
    config: SvbBuildConfig, speech: SpeechStage | None, epochs: dict[str, int], disciplines: DisciplineMap
) -> tuple[list[Experiment], list[Problem]]:
    """Every experiment, transcribed where it has a video and no transcript; transcription failures
    as failed units (the experiment is rejected with the reason; the next run asks again)."""
    sources = discover_sources(config.sources)
    filled = await fill_transcripts(sources, speech, epochs)
    experiments = await asyncio.gather(
        *(load_experiment(s, filled.provenance.get(s.video_id), disciplines) for s in filled.sources)
    )
    failures = [
        Problem(video_id=video_id, stage="transcription", message=message, failed=True)
        for video_id, message in sorted(filled.failures.items())
    ]
    return list(experiments), failures


def _check_inputs(config: SvbBuildConfig) -> tuple[dict[str, list[dict[str, str]]], DisciplineMap]:
    """Replacement prompts, exemplars and discipline labels, checked before anything is asked
    (one-line errors)."""
    try:
        recipe_prompts.check_override_dir(config.prompts)
    except PromptError as error:
        raise DataError(str(error)) from None
    return load_exemplars(config.exemplars), DisciplineMap.load(config.disciplines)


def check_video_input(config: SvbBuildConfig, backend: ModelBackend) -> None:
    """`-R generator=video` with a model that takes only images: stop before anything is asked."""
    modes = getattr(backend, "input_modes", lambda: ("images",))()
    if config.generator == "video" and "video" not in modes:
        raise DataError(
            f"-R generator=video: {config.llm} takes frames as images only; use -R generator=frames "
            "(the same frames, each labelled with its time)"
        )


async def build_scivideobench(config: SvbBuildConfig, *, log: Log | None = None) -> dict[str, Any]:
    say = log or (lambda _m: None)
    started = time.monotonic()
    out = config.out.expanduser()
    check_out_dir(out)
    exemplars, disciplines = _check_inputs(config)
    discover_sources(config.sources)  # a missing folder stops here, before any model is created
    out.mkdir(parents=True, exist_ok=True)
    state = BuildState(out)
    speech = open_stage(config.stt, state.root, concurrency=config.concurrency)
    ledger = Ledger(prices=_prices(config))
    retries = RetryBook(state.root, retry_failed=config.retry_failed)
    retries.redo(config.redo_phases(), allowed=tuple(REDO_PHASES.values()))
    if config.redo:
        say(f"redo: {', '.join(config.redo)} asked again with fresh requests")
    options = {"concurrency": config.concurrency, **config.backend_options, "cache_dir": state.cache_dir}
    backends: dict[str, ModelBackend] = {
        "llm": create_backend(config.llm, **backend_options(config, state.cache_dir))
    }
    check_video_input(config, backends["llm"])
    if config.blind_samples and config.blind_llm and config.blind_llm != config.llm:
        backends["blind"] = create_backend(config.blind_llm, **options)

    def client(backend: ModelBackend, role: str) -> LLMClient:
        return LLMClient(backend, role, config, ledger, retries)

    llm = client(backends["llm"], "llm")
    blind = client(backends.get("blind", backends["llm"]), "blind") if config.blind_samples else None
    calls = asyncio.Semaphore(config.concurrency)
    # One embedding table for the whole build: the twin check embeds each option text once.
    roles = Roles(config, llm, RoleStore(state.root / "svb"), exemplars, calls, TwinCheck.with_model())
    try:
        experiments, speech_problems = await _experiments(config, speech, retries.epochs, disciplines)
        say(f"{len(experiments)} experiment(s) found in {config.sources}")
        usable = [e for e in experiments if not e.problems]
        outputs = await asyncio.gather(*(_draft(roles, e, say) for e in usable))
        drafts = [d for o in outputs for d in o.drafts]
        by_id = {e.video_id: e for e in experiments}
        items = [record_to_item(_row(d, by_id[d.video_id]), out) for d in drafts]
        audit = AuditResult()
        text_audits(items, {e.video_id: e.narration for e in usable}, audit, narration=True)
        await blind_audit(
            blind,
            items,
            audit,
            samples=config.blind_samples,
            temperature=config.blind_temperature,
            margin=config.blind_margin,
            calls=calls,
        )
        rows = write_release(out, drafts, by_id, audit.flags, audit.blind)
        audit.problems += speech_problems
        report = _report(config, experiments, outputs, drafts, rows, audit, ledger, speech, roles, started)
    finally:
        if speech is not None:
            await speech.aclose()
        for backend in backends.values():
            await backend.aclose()
    write_atomic(out / "build_report.json", json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    write_atomic(out / "build_report.md", markdown_report(report))
    return report


def _row(draft: SvbDraft, experiment: Experiment) -> dict[str, Any]:
    from expvid.construction.recipes.scivideobench.writer import record

    return record(draft, experiment)


async def _draft(roles: Roles, experiment: Experiment, say: Log) -> RoleOutput:
    CURRENT_EXPERIMENT.set(experiment.video_id)  # this task's calls are this experiment's (`--redo X:ID`)
    generated = await roles.generate(experiment)
    if not generated.complete:
        return generated
    verified = await roles.verify(experiment, generated)  # its problems include the generator's
    say(f"{experiment.video_id}: {len(generated.drafts)} generated, {len(verified.drafts)} kept")
    return verified


def _report(
    config: SvbBuildConfig,
    experiments: list[Experiment],
    outputs: list[RoleOutput],
    drafts: list[SvbDraft],
    rows: list[dict[str, Any]],
    audit: AuditResult,
    ledger: Ledger,
    speech: SpeechStage | None,
    roles: Roles,
    started: float,
) -> dict[str, Any]:
    accounting = ledger.as_dict()
    speech_section = speech.ledger.as_dict(config.stt) if speech else None
    token_cost = accounting["cost"]["this_run"]
    speech_cost = speech_section["cost_this_run"] if speech_section else 0.0
    total = None if token_cost is None or speech_cost is None else round(token_cost + speech_cost, 6)
    dropped: dict[str, dict[str, int]] = {}
    for output in outputs:
        for task, reasons in output.dropped.items():
            for reason, count in reasons.items():
                dropped.setdefault(task, {}).setdefault(reason, 0)
                dropped[task][reason] += count
    problems: list[Problem] = [p for o in outputs for p in o.problems] + audit.problems
    kept = Counter(d.task for d in drafts)
    letters = Counter(str(r["answer"]) for r in rows)
    flags = Counter(f["kind"] for entries in audit.flags.values() for f in entries)
    return {
        "format": 1,
        "recipe": "scivideobench",
        "sources": str(config.sources),
        "out": str(config.out),
        "seconds": round(time.monotonic() - started, 2),
        "models": {
            "llm": config.llm,
            "blind": (config.blind_llm or config.llm) if config.blind_samples else None,
            "stt": config.stt.describe() if config.stt else None,
        },
        "prompts": {
            pid: {"sha256": roles.prompt(pid).sha256, "source": roles.prompt(pid).source}
            for pid in recipe_prompts.PROMPTS
        },
        "settings": config.model_dump(
            mode="json", exclude={"sources", "out", "backend_options", "prices", "stt"}
        ),
        **accounting,
        "speech": speech_section,
        "total_cost": {"this_run": total, "tokens": token_cost, "speech": speech_cost},
        "experiments": {
            "found": len(experiments),
            "rejected": {e.video_id: e.problems for e in experiments if e.problems},
            "transcribed": sorted(
                e.video_id for e in experiments if e.transcript_provenance.get("engine") not in (None, "file")
            ),
        },
        "items": {
            task: {"kept": kept.get(task, 0), "dropped": dropped.get(task, {})} for task in config.per_type
        },
        "total_items": len(rows),
        "answer_letters": dict(sorted(letters.items())),
        "flags": dict(sorted(flags.items())),
        "flagged_items": len(audit.flags),
        "stages": {"reused": roles.store.reused, "computed": roles.store.computed},
        "per_item": _per_item(accounting, total, len(rows)),
        "problems": [p.model_dump() for p in problems],
        "failed_units": [p.model_dump() for p in problems if p.failed or p.transient],
    }


def _per_item(accounting: dict[str, Any], total: float | None, items: int) -> dict[str, Any]:
    calls = accounting["calls"]
    tokens = accounting["tokens"]
    answered = calls["sent"] + calls["cache_hits"]
    all_tokens = (
        tokens["prompt"] + tokens["completion"] + tokens["cached_prompt"] + tokens["cached_completion"]
    )
    return {
        "calls": round(answered / items, 2) if items else None,
        "tokens": round(all_tokens / items, 1) if items else None,
        "cost_this_run": round(total / items, 6) if items and total is not None else None,
    }


async def estimate_scivideobench(config: SvbBuildConfig) -> dict[str, Any]:
    """`--dry-run`: no model asked, nothing written (see `estimate.py`)."""
    check_out_dir(config.out.expanduser())
    recipe_prompts.check_override_dir(config.prompts)
    return await estimate(
        config,
        load_exemplars(config.exemplars),
        discover_sources(config.sources),
        config.out.expanduser() / STATE_DIR,
    )
