"""Benchmark: the text-only audit of 10,000 items (target: under 10 s on a 2-core machine).

Generates a release of 10,000 multiple-choice items (tests/audit/audit_releases.py: clean text and
numeric items, and items with planted shortcuts: longest option, middle value, roundest value,
twins) and measures `expvid.audit.audit_items` on it, phase by phase:

  solvers      every text-only solver on every task (position, length, numbers, format, words,
               ordering) and the learned baseline (5-fold cross-validated logistic regression)
  checks       near-duplicate options by normal form and value, option counts, time ranges,
               answer in question
  total        the whole audit without embeddings (what the 10 s target is about)
  embeddings   stated separately: the MiniLM pass over the option texts the paraphrase test needs
               (the model's load time excluded and printed on its own)

and, for comparison, the alternative that does not share an item's readings between solvers (each
solver reads every item afresh: lengths, numbers, normal forms): the ratio is printed.

Usage: python benchmarks/audit_speed.py [--items 10000] [--repeat 3] [--embeddings]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "audit"))

from audit_releases import planted_release

from expvid.audit import AuditOptions, audit_items
from expvid.audit.duplicates import EmbeddingTable, default_embedder, embedding_texts
from expvid.audit.engine import solver_registry
from expvid.audit.option_text import _key, _number
from expvid.audit.views import OptionView


class _Timer:
    """A progress display that records when each phase starts (the audit's own phases)."""

    def __init__(self) -> None:
        self.starts: list[tuple[str, float]] = []

    def phase(self, name: str, total: int) -> _Timer:
        self.starts.append((name, time.perf_counter()))
        return self

    def advance(self) -> None:
        return None


def _release(n: int) -> list:
    per_group = n // 10
    return planted_release(per_group=per_group, clean=n - 4 * per_group, seed=3)


def _cold() -> None:
    _key.cache_clear()
    _number.cache_clear()


def _heuristics(items: list, *, fresh: bool) -> float:
    """Every solver but the learned one; `fresh`: each solver builds its own views, caches emptied
    (no reading shared between solvers), else one view per item shared by all."""
    started = time.perf_counter()
    tasks: dict[str, list] = {}
    for item in items:
        tasks.setdefault(item.task, []).append(item)
    shared = {
        task: [v for v in map(OptionView.of, task_items) if v is not None]
        for task, task_items in tasks.items()
    }
    for solver in solver_registry(AuditOptions(learned=False)):
        for task, task_items in tasks.items():
            if fresh:
                _cold()
                views = [v for v in map(OptionView.of, task_items) if v is not None]
            else:
                views = shared[task]
            solver.solve(views)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--embeddings", action="store_true", help="also time the MiniLM pass")
    args = parser.parse_args()
    items = _release(args.items)
    totals, phases = [], []
    for _ in range(args.repeat):
        _cold()
        timer = _Timer()
        started = time.perf_counter()
        report = audit_items(items, options=AuditOptions(embeddings=False), progress=timer)
        ended = time.perf_counter()
        totals.append(ended - started)
        marks = [*timer.starts, ("end", ended)]
        phases.append({name: marks[i + 1][1] - at for i, (name, at) in enumerate(marks[:-1])})
    total = statistics.median(totals)
    print(
        f"{len(items)} items, {len(report.solvers)} (solver, task) tests, {len(report.flagged_items)} items flagged"
    )
    for name in phases[0]:
        print(f"  {name:<20} {statistics.median(p[name] for p in phases):6.2f} s")
    print(f"  {'total (no embeddings)':<20} {total:6.2f} s  ({total / 10:.2f}x the 10 s target)")
    _cold()
    shared = _heuristics(items, fresh=False)
    unshared = _heuristics(items, fresh=True)
    print(
        f"  heuristic solvers {shared:.2f} s with readings shared vs {unshared:.2f} s read afresh per solver "
        f"({unshared / max(shared, 1e-9):.1f}x)"
    )
    if args.embeddings:
        started = time.perf_counter()
        embedder = default_embedder()
        embedder.encode(["warm up"])  # type: ignore[attr-defined]
        loaded = time.perf_counter() - started
        texts = list(
            dict.fromkeys(t for item in items if item.options for t in embedding_texts(item.options))
        )
        started = time.perf_counter()
        EmbeddingTable(embedder).add(texts)
        print(
            f"  embeddings: model load {loaded:.1f} s; {len(texts)} texts in {time.perf_counter() - started:.2f} s"
        )


if __name__ == "__main__":
    main()
