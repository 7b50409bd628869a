"""The caveat lines every rendering of a run shows under its table: one line per kind of problem.

A number in a results table means little without what it excludes or scored 0 for other reasons
than the model's answer. From a run's scores.json this makes one line for each that applies:
partial run, failed items by kind, invalid records, records of unknown task,
answers cut by the token limit, unparseable answers, judge failures; each with its tasks.
Scores written before some of these counts existed simply lack those lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from expvid.run.scoring_phase import RunScores, RunSummary

#: Answers scored as they are or 0 for a reason the reader must know: a task count, and what it counts.
_ANSWER_CAVEATS = (
    ("n_truncated", "answer(s) cut by the token limit (finish_reason: length), scored as they are"),
    ("n_unparseable", "unparseable answer(s) scored 0"),
    ("n_judge_failed", "item(s) whose judge failed scored 0"),
)


def _per_task(tasks: Mapping[str, Any], count: Callable[[Any], int]) -> tuple[int, str]:
    counts = {name: count(task) for name, task in tasks.items()}
    shown = [f"{name} {n}" for name, n in counts.items() if n]
    return sum(counts.values()), ", ".join(shown)


def unfinished_reason(run: RunSummary) -> str | None:
    """Why generation has not finished (a budget stop, requests still in a provider's batch), or None.

    Such a run is partial whatever its selection: the items not answered yet are missing from its
    scores, and running the same command again (with a larger budget) continues it."""
    reasons = []
    if run.budget_stop:
        reasons.append(run.budget_stop)
    if run.pending_batch_requests:
        reasons.append(
            f"{run.pending_batch_requests} request(s) still waiting in the provider's batches; "
            "re-run the same command to collect them"
        )
    return "; ".join(reasons) or None


def partial_reason(run: RunSummary) -> str | None:
    """Everything that makes the run partial: its selection (--limit, --tasks) and why it is unfinished."""
    return "; ".join(reason for reason in (run.partial, unfinished_reason(run)) if reason) or None


def partial_label(scores: RunScores) -> str | None:
    """ "partial" / "incomplete" / "stopped at budget" / "waiting for batches" for a row label, or
    None for a full, complete run."""
    labels = []
    if scores.run.partial:
        labels.append("partial")
    if not scores.run.complete:
        labels.append("incomplete")
    if scores.run.budget_stop:
        labels.append("stopped at budget")
    if scores.run.pending_batch_requests:
        labels.append("waiting for batches")
    return ", ".join(labels) or None


def run_caveats(label: str, scores: RunScores) -> list[str]:
    run = scores.run
    tasks = scores.tasks
    lines: list[str] = []
    if run.partial:
        lines.append(
            f"{label}: PARTIAL run ({run.partial}); not comparable with full runs or with a paper's rows"
        )
    if run.budget_stop:
        lines.append(
            f"{label}: {run.budget_stop}; {run.n_missing} item(s) not asked are missing from the scores"
        )
    if run.pending_batch_requests:
        lines.append(
            f"{label}: {run.pending_batch_requests} request(s) still waiting in the provider's batches are "
            "missing from the scores; re-run the same command to collect them"
        )
    n_failed, where = _per_task(tasks, lambda t: t.n_failed)
    if n_failed:
        kinds = ", ".join(f"{kind} {n}" for kind, n in run.failed_by_kind.items()) or "kinds not recorded"
        lines.append(f"{label}: {n_failed} failed item(s) scored 0 ({kinds}; by task: {where})")
    n_invalid, where = _per_task(tasks, lambda t: t.n_invalid)
    if n_invalid:
        lines.append(f"{label}: {n_invalid} invalid record(s) in the task files scored 0 (by task: {where})")
    if run.n_invalid_unknown_task:
        lines.append(
            f"{label}: {run.n_invalid_unknown_task} record(s) unreadable even as to their task: in no task's "
            "score (see `expvid data check`)"
        )
    for count, what in _ANSWER_CAVEATS:
        n, where = _per_task(tasks, attrgetter(count))
        if n:
            lines.append(f"{label}: {n} {what} (by task: {where})")
    return lines


def _groups(labelled: Sequence[tuple[str, str | None]]) -> str:
    by_print: dict[str, list[str]] = {}
    for label, fingerprint in labelled:
        by_print.setdefault(fingerprint or "not recorded", []).append(label)
    return " vs ".join(f"{', '.join(labels)} ({key[:12]})" for key, labels in by_print.items())


def dataset_notes(runs: Sequence[tuple[str, RunScores]]) -> list[str]:
    """Lines saying that rows side by side were made on different data: other annotation files
    (different items), or other media (two partial or damaged downloads of one release). The same
    check `expvid compare` refuses on, said under every table instead of refusing."""
    if len(runs) < 2:
        return []
    notes = []
    annotations = [(label, s.run.annotations_fingerprint or _legacy_print(s)) for label, s in runs]
    known = [(label, value) for label, value in annotations if value is not None]
    if len({value for _, value in known}) > 1:
        notes.append(
            "runs scored on DIFFERENT annotation files (not the same items; annotation fingerprints "
            f"{_groups(known)}): their numbers are not comparable"
        )
        return notes
    media = [(label, s.run.dataset_fingerprint) for label, s in runs if s.run.media_fingerprinted]
    if len({value for _, value in media}) > 1:
        notes.append(
            "runs made on DIFFERENT media (a partial or different download: media fingerprints "
            f"{_groups(media)}; `expvid data check` lists missing files): their numbers are not over the same videos"
        )
    return notes


def _legacy_print(scores: RunScores) -> str | None:
    """Scores written before media were fingerprinted hold the annotations-only hash as the dataset's."""
    return None if scores.run.media_fingerprinted else scores.run.dataset_fingerprint
