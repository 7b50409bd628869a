"""Each recipe's sample build through `expvid build` and its audit gate: what the audit finds.

Builds the bundled sample of each recipe with the command line, exactly as a user would, against the
tests' scripted labs on loopback (no model is reachable here): the ExpVid recipe on `expvid sample
make`'s sources (every stage, one blind sample), SciVideoBench on the narrated sample videos
(`expvid sample make --recipe scivideobench`, speech-to-text on a loopback server, the recipe's
defaults), ProMQA on `expvid sample make --suite promqa`'s CaptainCook4D-style sources (its
defaults). Prints, per recipe: the exit status, the gate's verdict, the solvers that beat chance
(blocking, accepted or informational in the suite's evaluation setting), the item flags, and the
best solver of each task against its chance. docs/audit.md, docs/build.md,
docs/scivideobench-recipe.md and docs/build_promqa.md quote these figures.

    .venv/bin/python benchmarks/audit_gate_samples.py [--recipe expvid|scivideobench|promqa] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for area in ("construction", "construction_scivideobench", "construction_promqa"):
    sys.path.insert(0, str(ROOT / "tests" / area))


def _cli(args: list[str]) -> tuple[int, str]:
    from typer.testing import CliRunner

    from expvid.cli.main import app

    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def build_expvid(work: Path) -> tuple[int, Path]:
    from build_responder import ScriptedLab

    from expvid.fakes.models.server import LoopbackServer
    from expvid.suites.sample import make_sample

    make_sample(work / "sample", seed=0)
    out = work / "expvid"
    with LoopbackServer(ScriptedLab()) as lab:
        code, _ = _cli(
            ["build", str(work / "sample" / "sources"), "--out", str(out), "--llm",
             f"openai:deepseek-r1@{lab.openai_base_url}", "--min-duration", "60", "--max-duration", "900",
             "--trim-slides", "--blind-samples", "1", "--preset", "ultrafast", "--jobs", "1", "--quiet"]
        )  # fmt: skip
    return code, out


def build_scivideobench(work: Path) -> tuple[int, Path]:
    from svb_lab import SvbLab

    from expvid.fakes.models.server import LoopbackServer
    from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer
    from expvid.suites.sample.speech_sources import make_speech_sources

    make_speech_sources(work / "svb", experiments=2)
    out = work / "scivideobench"
    with LoopbackServer(SvbLab()) as llm, TranscriptionServer(TranscriptionScript()) as stt:
        code, _ = _cli(
            ["build", str(work / "svb" / "sources"), "--recipe", "scivideobench", "--out", str(out),
             "--llm", f"openai:lab@{llm.openai_base_url}", "-R", f"stt=openai:whisper-1@{stt.openai_base_url}",
             "--quiet"]
        )  # fmt: skip
    return code, out


def build_promqa(work: Path) -> tuple[int, Path]:
    from promqa_lab import PromqaLab

    from expvid.fakes.models.server import LoopbackServer

    code, _ = _cli(["sample", "make", str(work / "pq"), "--suite", "promqa"])
    assert code == 0
    out = work / "promqa"
    with LoopbackServer(PromqaLab()) as server:
        code, _ = _cli(
            ["build", str(work / "pq" / "sources"), "--recipe", "promqa", "--out", str(out), "--llm",
             f"openai:gpt-4o-2024-08-06@{server.openai_base_url}", "--quiet"]
        )  # fmt: skip
    return code, out


BUILDS = {"expvid": build_expvid, "scivideobench": build_scivideobench, "promqa": build_promqa}


def describe(recipe: str, code: int, out: Path, seconds: float) -> None:
    from expvid.audit import read_audit

    gate = json.loads((out / "build_report.json").read_text(encoding="utf-8"))["audit_gate"]
    audit = read_audit(out)
    print(f"## {recipe}: exit {code}, {gate['items']} items, gate {'passed' if gate['passed'] else 'NOT PASSED'} "
          f"({seconds:.0f} s)")  # fmt: skip
    print(f"transcript shown in the suite's setting: {audit.settings.get('transcript_shown')} "
          f"({audit.settings.get('transcript_decided')})")  # fmt: skip
    for kind in ("blocking", "accepted", "informational"):
        for finding in gate[kind]:
            print(f"- {kind}: {finding['solver']} on {finding['task']}: {finding['accuracy']:.1%} "
                  f"(chance {finding['chance']:.1%}, n={finding['n']})")  # fmt: skip
    flags = Counter(flag for item in audit.items for flag in item.flags)
    print(f"items flagged: {gate['flagged_items']} of {gate['items']} {dict(flags)}")
    print(f"{len(audit.solvers)} (solver, task) tests; best per task (not informational):")
    best: dict[str, tuple[float, str, float, float, int]] = {}
    for solver in audit.solvers:
        if solver.informational:
            continue
        lift = solver.accuracy - solver.chance
        if solver.task not in best or lift > best[solver.task][0]:
            best[solver.task] = (lift, solver.name, solver.accuracy, solver.chance, solver.n)
    for task, (_, name, accuracy, chance, n) in sorted(best.items()):
        print(f"  {task}: {name} {accuracy:.1%} (chance {chance:.1%}, n={n})")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", choices=sorted(BUILDS), action="append")
    parser.add_argument("--keep", type=Path, help="build into this folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = args.keep or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        for recipe in args.recipe or list(BUILDS):
            started = time.monotonic()
            code, out = BUILDS[recipe](work)
            describe(recipe, code, out, time.monotonic() - started)


if __name__ == "__main__":
    main()
