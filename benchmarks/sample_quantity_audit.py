"""The validity audit on the sample's quantity items, drafted many times: how far a blind solver gets.

Every quantity of the sample's protocols (`expvid.suites.sample.scripts`) is drafted `--draws` times
with `expvid.suites.sample.quantity_distractors.quantity_distractors` (other draws each time), its letter drawn
uniformly, and the text-only solvers of `expvid audit` run on the four-option items; per seed, the
best solvers with their accuracy (chance 25%) and whether the audit flags them. docs/audit.md quotes it.

    .venv/bin/python benchmarks/sample_quantity_audit.py --draws 2 --seeds 6
    .venv/bin/python benchmarks/sample_quantity_audit.py --draws 6 --seeds 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "suites"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2, help="drafts of each protocol quantity")
    parser.add_argument("--seeds", type=int, default=6)
    args = parser.parse_args()
    from test_sample_audit import quantity_items

    from expvid.audit import AuditOptions, audit_items

    for seed in range(args.seeds):
        items = quantity_items(args.draws, seed)
        report = audit_items(items, options=AuditOptions(embeddings=False))
        ranked = sorted(report.solvers, key=lambda s: s.accuracy - s.chance, reverse=True)[:4]
        shown = ", ".join(f"{s.name} {s.accuracy:.1%}{' FLAGGED' if s.flagged else ''}" for s in ranked)
        learned = next(s for s in report.solvers if s.name == "learned text-only model")
        print(
            f"seed {seed}: {len(items)} items; learned text-only model {learned.accuracy:.1%}; best: {shown}; "
            f"{len(report.flagged_solvers)} flagged"
        )


if __name__ == "__main__":
    main()
