"""`audit_items`: the whole audit of a list of items (and optional runs), as one `AuditReport`.

Order of work: the text-only solvers on every multiple-choice task (each (solver, task) one test
against chance), Holm's correction over all the tests, then the item checks, then the controls and
the item analysis from runs. An item is flagged by each flagged solver that answers it correctly
(its pick is the correct option, alone or tied with one other) and by each check that fails.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from expvid.audit import checks, stats
from expvid.audit.duplicates import EMBEDDING_THRESHOLD, Embedder, EmbeddingTable, embedding_texts
from expvid.audit.learned import learned_solver, learned_transcript_solver
from expvid.audit.result import AuditReport, ItemResult, SolverResult, TaskSummary
from expvid.audit.solvers import Scores, Solver, builtin_solvers, suite_solver
from expvid.audit.views import OptionView
from expvid.schema import DataError, Item
from expvid.suites.shortcuts import ShortcutSolver

EPS = 1e-9


class Bar(Protocol):
    def advance(self) -> Any: ...


class Progress(Protocol):
    """A progress display (`expvid.run.progress.RunProgress` fits): one bar per phase."""

    def phase(self, name: str, total: int) -> Bar: ...


class _NoBar:
    def advance(self) -> None:
        return None


class _NoProgress:
    def phase(self, name: str, total: int) -> Bar:
        return _NoBar()


@dataclass
class AuditOptions:
    """How an audit runs. `embeddings`: compare options by MiniLM embeddings too (an embedder, True
    for the packaged MiniLM model, False for normal forms and values only)."""

    alpha: float = stats.ALPHA
    embeddings: Embedder | bool = True
    threshold: float = EMBEDDING_THRESHOLD
    #: A suite's own solvers (`Suite.shortcut_solvers()`).
    extra_solvers: Sequence[ShortcutSolver] = ()
    #: Options per item by task ("all": every task), as the suite states them.
    option_counts: Mapping[str, int] = field(default_factory=dict)
    learned: bool = True
    #: Whether the evaluated model is shown the items' transcripts (`expvid.audit.setting`): False
    #: makes the `transcript` family informational (reported, flags nothing); None: undecided, they
    #: count like every other solver.
    transcript_shown: bool | None = None
    #: How `transcript_shown` was decided (recorded in the report's settings).
    transcript_decided: str = "not decided"


#: Solver families that read the transcript an item carries (`Item.context`).
TRANSCRIPT_FAMILY = "transcript"


def informational_reason(family: str, options: AuditOptions) -> str | None:
    """Why a solver of `family` flags nothing in this setting (None: it counts)."""
    if family == TRANSCRIPT_FAMILY and options.transcript_shown is False:
        return (
            "reads the transcript, which the suite's evaluation setting does not show the model "
            f"({options.transcript_decided})"
        )
    return None


@dataclass
class _Test:
    solver: Solver
    task: str
    accuracy: list[float | None]  # per item of the task: expected accuracy, None if not answered
    views: list[OptionView]

    @property
    def answered(self) -> list[tuple[OptionView, float]]:
        return [(v, a) for v, a in zip(self.views, self.accuracy, strict=True) if a is not None]


def expected_accuracy(scores: Scores, correct: int) -> float | None:
    """1/t when the correct option is among the t options tied best (equal up to a relative 1e-9),
    else 0; None when the solver does not apply or ties every option (it made no pick)."""
    if scores is None or not scores:
        return None
    best = max(scores)
    # Ties within rounding of the scores' own scale: values in SI units (0.07 nm = 7e-11 m) differ
    # by far less than any absolute tolerance.
    tolerance = EPS * max(abs(s) for s in scores)
    tied = [i for i, s in enumerate(scores) if s >= best - tolerance]
    if len(tied) == len(scores):
        return None
    return 1.0 / len(tied) if correct in tied else 0.0


def solver_registry(options: AuditOptions) -> list[Solver]:
    solvers = builtin_solvers()
    if options.learned:
        solvers += [learned_solver(), learned_transcript_solver()]
    solvers += [suite_solver(extra) for extra in options.extra_solvers]
    return solvers


def _run_solvers(
    views_by_task: Mapping[str, list[OptionView]], solvers: Sequence[Solver], progress: Progress
) -> list[_Test]:
    pairs = [(solver, task) for task in views_by_task for solver in solvers if solver.applies_to(task)]
    bar = progress.phase("text-only solvers", len(pairs))
    tests = []
    for solver, task in pairs:
        views = views_by_task[task]
        scores = solver.solve(views)
        accuracy = [expected_accuracy(s, v.correct) for s, v in zip(scores, views, strict=True)]
        tests.append(_Test(solver, task, accuracy, views))
        bar.advance()
    return [test for test in tests if test.answered]


def _results(tests: Sequence[_Test], options: AuditOptions) -> list[SolverResult]:
    alpha = options.alpha
    raw = []
    for test in tests:
        answered = test.answered
        n = len(answered)
        hits = sum(a for _, a in answered)
        chance = sum(v.chance for v, _ in answered) / n
        raw.append((test, n, hits, chance, stats.p_above_chance(hits, n, chance)))
    adjusted, levels = stats.holm([p for *_, p in raw], alpha)
    results = []
    for (test, n, hits, chance, p), p_holm, level in zip(raw, adjusted, levels, strict=True):
        interval = stats.clopper_pearson(hits, n)
        informational = informational_reason(test.solver.family, options)
        results.append(
            SolverResult(
                name=test.solver.name,
                task=test.task,
                family=test.solver.family,
                description=test.solver.description,
                accuracy=round(hits / n, 6),
                chance=round(chance, 6),
                ci_low=round(interval.low, 6),
                ci_high=round(interval.high, 6),
                n=n,
                flagged=p_holm < alpha and informational is None,
                beats_chance=p_holm < alpha,
                informational=informational,
                hits=round(hits, 6),
                p_value=p,
                p_holm=p_holm,
                ci_low_corrected=round(stats.lower_bound(hits, n, level), 6),
            )
        )
    return results


def _embedding_table(
    items: Sequence[Item], options: AuditOptions, progress: Progress
) -> EmbeddingTable | None:
    if options.embeddings is False:
        return None
    if options.embeddings is True:
        from expvid.audit.duplicates import default_embedder

        embedder: Embedder = default_embedder()
    else:
        embedder = options.embeddings
    table = EmbeddingTable(embedder)
    texts = list(dict.fromkeys(t for item in items if item.options for t in embedding_texts(item.options)))
    bar = progress.phase("option embeddings (MiniLM)", len(texts))
    table.add(texts, advance=lambda n: [bar.advance() for _ in range(n)])
    return table


def audit_items(
    items: Sequence[Item],
    *,
    options: AuditOptions | None = None,
    runs: Iterable[Any] = (),
    progress: Progress | None = None,
    problems: Sequence[str] = (),
    invalid: Sequence[tuple[str, str, str]] = (),
    suite: str | None = None,
    data: str | None = None,
    fingerprint: str | None = None,
) -> AuditReport:
    """Audit `items` (`expvid.schema.Item`s of one release, in release order).

    `runs`: run directories of the same release (`expvid.audit.runs.RunRecord`s or paths) for the
    controls and the item analysis; `problems`: the release's unreadable records as `file:line:
    message`; `invalid`: (id, task, message) of records that never became items (flagged "invalid
    record"). Returns the report that `AuditReport.write` saves as audit.json."""
    options = options or AuditOptions()
    progress = progress or _NoProgress()
    report = AuditReport(
        suite=suite or (items[0].suite if items else None),
        data=data,
        fingerprint=fingerprint,
        settings={
            "alpha": options.alpha,
            "correction": "holm",
            "interval": "clopper-pearson",
            "embeddings": options.embeddings is not False,
            "embedding_threshold": options.threshold if options.embeddings is not False else None,
            "transcript_shown": options.transcript_shown,
            "transcript_decided": options.transcript_decided,
        },
        problems=list(problems),
    )
    results = {item.id: ItemResult(id=item.id, task=item.task) for item in items}
    if len(results) != len(items):
        repeated = sorted(key for key, n in Counter(item.id for item in items).items() if n > 1)
        raise DataError(f"item ids must be unique within a release; repeated: {', '.join(repeated[:5])}")
    views_by_task: dict[str, list[OptionView]] = {}
    for item in items:
        view = OptionView.of(item)
        if view is not None:
            views_by_task.setdefault(item.task, []).append(view)

    tests = _run_solvers(views_by_task, solver_registry(options), progress)
    report.solvers = _results(tests, options)
    for test, result in zip(tests, report.solvers, strict=True):
        if not result.flagged:
            continue
        for view, accuracy in test.answered:
            if accuracy >= 0.5 and accuracy > view.chance + EPS:
                results[view.item.id].flag(
                    result.name,
                    f"{result.name} picks the correct option; it scores {result.accuracy:.1%} on {result.task} "
                    f"(chance {result.chance:.1%}, n={result.n}, Holm p={result.p_holm:.2g})",
                )

    table = _embedding_table(items, options, progress)
    usual = checks.usual_counts(items, options.option_counts)
    unchecked_times = 0
    bar = progress.phase("item checks", len(items))
    for item in items:
        entry = results[item.id]
        checks.check_duplicates(item, entry, table)
        checks.check_option_count(item, entry, usual)
        unchecked_times += checks.check_times(item, entry, checks.video_duration)
        checks.check_answer_in_question(item, entry)
        bar.advance()
    if unchecked_times:
        report.notes.append(
            f"{unchecked_times} item(s) have time ranges that could not be checked against their video "
            "(video missing and no video_duration recorded)"
        )
    report.items = list(results.values())
    for item_id, task, message in invalid:
        report.items.append(
            ItemResult(id=item_id, task=task, flags=["invalid record"], reasons={"invalid record": message})
        )

    if runs:
        from expvid.audit.runs_audit import add_run_findings

        add_run_findings(report, items, list(runs), progress)
    report.tasks = _task_summaries(items, views_by_task, report)
    return report


def _task_summaries(
    items: Sequence[Item], views: Mapping[str, list[OptionView]], report: AuditReport
) -> list[TaskSummary]:
    tasks: dict[str, TaskSummary] = {}
    for item in items:
        summary = tasks.setdefault(item.task, TaskSummary(task=item.task, items=0))
        summary.items += 1
    for entry in report.items:
        if entry.flags and entry.task in tasks:
            tasks[entry.task].flagged_items += 1
    for task, task_views in views.items():
        tasks[task].choice_items = len(task_views)
        tasks[task].mean_chance = round(sum(v.chance for v in task_views) / len(task_views), 6)
    lifts: dict[str, float] = {}
    for solver in report.solvers:
        summary = tasks[solver.task]
        if solver.flagged:
            summary.flagged_solvers.append(solver.name)
        lift = solver.accuracy - solver.chance
        if solver.task not in lifts or lift > lifts[solver.task]:
            lifts[solver.task] = lift
            summary.best_solver, summary.best_accuracy = solver.name, solver.accuracy
    return list(tasks.values())
