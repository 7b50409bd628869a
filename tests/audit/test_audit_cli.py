"""`expvid audit` on real and generated releases: its files, its exit codes and its one-line errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from expvid.audit import AuditReport, audit_release, read_audit
from expvid.cli.main import app
from expvid.schema import AnswerType, DataError, Item
from expvid.suites.mmvu.suite import MMVUSuite
from expvid.suites.registry import _REGISTERED, register_suite
from expvid.suites.shortcuts import ShortcutSolver

MMVU_EXCERPT = Path(__file__).parent / "data" / "mmvu"


def _audit(*args: str) -> Any:
    return CliRunner().invoke(app, ["audit", *args, "--quiet"])


def test_real_mmvu_questions_run_through_the_audit(tmp_path: Path) -> None:
    result = _audit(
        "--suite", "mmvu", "--data", str(MMVU_EXCERPT), "--out", str(tmp_path / "a"), "--no-embeddings"
    )
    assert result.exit_code == 0, result.output
    report = read_audit(tmp_path / "a")
    records = json.loads((MMVU_EXCERPT / "validation.json").read_text())
    assert [item.id for item in report.items] == [r["id"] for r in records]
    assert {item.task for item in report.items} == {"multiple_choice", "open_ended"}
    longest = next(s for s in report.solvers if s.name == "longest option")
    assert longest.task == "multiple_choice" and 0 < longest.n <= 30 and longest.chance == pytest.approx(0.2)
    assert not any(s.task == "open_ended" for s in report.solvers)  # no options: no text-only solver
    assert "# Validity audit: mmvu" in (tmp_path / "a" / "audit.md").read_text()
    assert (tmp_path / "a" / "audit.html").read_text().count("<svg") >= 2
    data = json.loads((tmp_path / "a" / "audit.json").read_text())
    assert set(data["solvers"][0]) >= {
        "name",
        "task",
        "accuracy",
        "chance",
        "ci_low",
        "ci_high",
        "n",
        "flagged",
    }
    assert set(data["items"][0]) >= {"id", "task", "flags"}


def _mmvu_release(root: Path, n: int, *, longest_correct: bool) -> Path:
    """An MMVU-format release of n generated questions (the correct option the longest, or not)."""
    records = []
    for i in range(n):
        options = [f"tool {i} {word}" for word in ("alpha", "beta", "gamma", "delta", "omega")]
        answer = "ABCDE"[i % 5]
        if longest_correct:
            options["ABCDE".index(answer)] += " held with a clamp and a stand"
        records.append(
            {"id": f"q{i}", "video": f"https://example.org/videos/Chemistry/{i}.mp4", "question_type": "multiple-choice",
             "metadata": {"subject": "Chemistry"}, "question": f"Which tool is used in clip {i}?",
             "choices": dict(zip("ABCDE", options, strict=True)), "answer": answer}
        )  # fmt: skip
    root.mkdir(parents=True)
    (root / "validation.json").write_text(json.dumps(records))
    return root


def test_fail_on_flag_exits_1_only_when_something_is_flagged(tmp_path: Path) -> None:
    leaky = _mmvu_release(tmp_path / "leaky", 60, longest_correct=True)
    clean = _mmvu_release(tmp_path / "clean", 60, longest_correct=False)
    flagged = _audit(
        "--suite",
        "mmvu",
        "--data",
        str(leaky),
        "--out",
        str(tmp_path / "a1"),
        "--no-embeddings",
        "--fail-on-flag",
    )
    assert flagged.exit_code == 1
    assert "flagged: longest option on multiple_choice: 100.0% (chance 20.0%, n=60" in flagged.output
    ran = _audit("--suite", "mmvu", "--data", str(leaky), "--out", str(tmp_path / "a2"), "--no-embeddings")
    assert ran.exit_code == 0  # without --fail-on-flag the audit ran: 0
    ok = _audit(
        "--suite",
        "mmvu",
        "--data",
        str(clean),
        "--out",
        str(tmp_path / "a3"),
        "--no-embeddings",
        "--fail-on-flag",
    )
    assert ok.exit_code == 0, ok.output
    assert read_audit(tmp_path / "a3").flagged_solvers == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "{missing}"], "--data {missing}: no such file or directory"),
        (["--data", "{clean}", "--suite", "nosuch"], "unknown suite 'nosuch'"),
        (
            ["--data", "{clean}", "--suite", "mmvu", "--runs", "{missing}"],
            "--runs {missing}: no such directory",
        ),
        (["--data", "{broken}", "--suite", "mmvu"], "validation.json"),
        (["--data", "{clean}", "--suite", "mmvu", "-S", "prompt=long"], "prompt"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    clean = _mmvu_release(tmp_path / "clean", 5, longest_correct=False)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "validation.json").write_text('[{"id": "q1",')
    paths = {"missing": str(tmp_path / "nowhere"), "clean": str(clean), "broken": str(broken)}
    filled = [a.format(**paths) for a in args]
    result = _audit(*filled, "--out", str(tmp_path / "out"), "--no-embeddings")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message.format(**paths) in lines[0], result.output
    assert not (tmp_path / "out" / "audit.json").exists()


def test_read_audit_names_the_file_it_cannot_use(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"no audit\.json there"):
        read_audit(tmp_path)
    (tmp_path / "audit.json").write_text("{not json")
    with pytest.raises(DataError, match=r"audit.json:1: not JSON"):
        read_audit(tmp_path)
    (tmp_path / "audit.json").write_text(json.dumps({"solvers": [{"name": "x"}], "items": []}))
    with pytest.raises(DataError, match=r"solvers.0.task: Field required"):
        read_audit(tmp_path / "audit.json")
    report = AuditReport(suite="s")
    report.write(tmp_path / "ok" / "audit.json")
    assert read_audit(tmp_path / "ok").suite == "s"


class _OddIdSuite(MMVUSuite):
    """MMVU with a shortcut of its own: the option whose text ends with the item's number."""

    name = "mmvu_with_solver"

    def shortcut_solvers(self) -> list[ShortcutSolver]:
        def ends_with_number(item: Item) -> dict[str, float] | None:
            if item.answer_type is not AnswerType.CHOICE:
                return None
            number = item.id.removeprefix("q")
            return {
                letter: float(text.endswith(f" {number}")) for letter, text in (item.options or {}).items()
            }

        return [
            ShortcutSolver("ends with the item number", ends_with_number, description="a suite's own solver")
        ]


def test_a_suite_adds_its_own_solver_through_the_api(tmp_path: Path) -> None:
    root = _mmvu_release(tmp_path / "r", 40, longest_correct=False)
    records = json.loads((root / "validation.json").read_text())
    for i, record in enumerate(records):
        record["choices"][record["answer"]] += f" {i}"  # the suite's own artefact
    (root / "validation.json").write_text(json.dumps(records))
    register_suite("mmvu_with_solver", _OddIdSuite)
    try:
        report = audit_release(root, suite="mmvu_with_solver", options=None)
    finally:
        _REGISTERED.pop("mmvu_with_solver", None)
    [own] = [s for s in report.solvers if s.name == "ends with the item number"]
    assert own.family == "suite" and own.flagged and own.accuracy == 1.0
    assert all("ends with the item number" in item.flags for item in report.items)


def _medoid_orders(correct: str, rng: Any) -> list[str]:
    """Three wrong orders around the correct one (two adjacent swaps and a reshuffle): the correct
    order is the medoid of such a set, as a model's own distractors (and the sample's, once) leave it."""
    import itertools

    steps = [line.split(". ", 1)[1] for line in correct.splitlines()]
    n = len(steps)
    swaps = []
    for i in range(n - 1):
        order = list(range(n))
        order[i], order[i + 1] = order[i + 1], order[i]
        swaps.append(tuple(order))
    rng.shuffle(swaps)
    chosen = swaps[:2]
    others = [p for p in itertools.permutations(range(n)) if p != tuple(range(n)) and p not in chosen]
    chosen.append(rng.choice(others))
    return ["\n".join(f"{k}. {steps[i]}" for k, i in enumerate(order, 1)) for order in chosen]


def test_a_recipe_build_output_is_audited_like_a_release(tmp_path: Path, sample_dir: Path) -> None:
    """The bundled ExpVid sample is laid out like `expvid build`'s output. Its step-ordering options
    are the symmetric sets the ExpVid recipe builds (no ordering solver applies: all four tie); the
    same items with a model's perturbations of the correct order as distractors are flagged."""
    import random

    copy = tmp_path / "sample"
    shutil.copytree(sample_dir / "annotations", copy / "annotations")
    args = ["--data", str(copy), "--no-embeddings", "--tasks", "sequence_ordering"]
    clean = _audit(*args, "--out", str(tmp_path / "clean"))
    assert clean.exit_code == 0, clean.output
    assert not [s for s in read_audit(tmp_path / "clean").solvers if s.family == "ordering"]
    path = copy / "annotations" / "level2" / "sequence_ordering.jsonl"
    rng = random.Random(4)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        correct = record["options"][record["answer"]]
        wrong = iter(_medoid_orders(correct, rng))
        record["options"] = {
            k: (v if k == record["answer"] else next(wrong)) for k, v in record["options"].items()
        }
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    result = _audit(*args, "--out", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    report = read_audit(tmp_path / "a")
    assert "ordering" in {s.family for s in report.solvers}
    assert any(s.flagged and s.name.startswith("ordering: ") for s in report.solvers)
