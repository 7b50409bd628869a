"""`expvid sample make`: deterministic, fast, and careful with the directory it writes to."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.suites.sample import TRUTH_FILE, SampleDirectoryError, is_sample_dir, make_sample, read_truth
from expvid.suites.sample.truth import write_marker

#: Brief: a few seconds, under 10 s wall on 2 cores. Measured as CPU seconds of this process and
#: its workers (wall time on a shared machine says more about the neighbours than about us):
#: 2 cores x 10 s.
CPU_BUDGET_S = 20.0


def _annotation_bytes(root: Path) -> dict[str, bytes]:
    files = sorted((root / "annotations").rglob("*.jsonl"))
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in files}


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def test_cli_generation_is_deterministic_and_within_budget(sample_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "again"
    cpu, wall = _cpu_seconds(), time.perf_counter()
    result = CliRunner().invoke(app, ["sample", "make", str(target), "--seed", "0"])
    cpu, wall = _cpu_seconds() - cpu, time.perf_counter() - wall
    assert result.exit_code == 0, result.output
    assert "sequence_generation" in result.output and "6 experiments" in result.output
    print(f"sample generation: {wall:.1f} s wall, {cpu:.1f} s CPU")
    assert cpu < CPU_BUDGET_S, f"generation used {cpu:.1f} s CPU ({wall:.1f} s wall)"

    assert _annotation_bytes(target) == _annotation_bytes(sample_dir)
    assert len(_annotation_bytes(target)) == 10
    assert (target / TRUTH_FILE).read_bytes() == (sample_dir / TRUTH_FILE).read_bytes()
    transcripts = sorted((target / "sources").rglob("transcript.srt"))
    assert [p.read_bytes() for p in transcripts] == [
        (sample_dir / p.relative_to(target)).read_bytes() for p in transcripts
    ]

    again = CliRunner().invoke(app, ["sample", "make", str(target)])
    assert again.exit_code == 1
    assert "already holds a sample; pass --force" in again.output


def test_seed_changes_the_items_but_not_the_layout(tmp_path: Path, sample_dir: Path) -> None:
    summary = make_sample(tmp_path / "seed1", seed=1, render_videos=False)
    assert summary.videos is False and summary.total_items > 100
    other = _annotation_bytes(tmp_path / "seed1")
    assert other.keys() == _annotation_bytes(sample_dir).keys()
    assert other != _annotation_bytes(sample_dir)
    assert read_truth(tmp_path / "seed1")["seed"] == 1
    assert not (tmp_path / "seed1" / "videos").exists()


def test_refuses_unrelated_non_empty_directories(tmp_path: Path) -> None:
    target = tmp_path / "thesis"
    target.mkdir()
    (target / "chapter1.tex").write_text("precious", encoding="utf-8")
    for force in (False, True):
        with pytest.raises(SampleDirectoryError, match="not empty and holds no expvid sample"):
            make_sample(target, render_videos=False, force=force)
    assert [p.name for p in target.iterdir()] == ["chapter1.tex"]

    result = CliRunner().invoke(app, ["sample", "make", str(target), "--force"])
    assert result.exit_code == 1 and "refusing to write" in result.output

    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(SampleDirectoryError, match="not a directory"):
        make_sample(tmp_path / "file", render_videos=False)


def test_force_replaces_only_what_the_generator_wrote(tmp_path: Path) -> None:
    target = tmp_path / "sample"
    make_sample(target, seed=0, render_videos=False)
    first = _annotation_bytes(target)
    (target / "NOTES.md").write_text("mine", encoding="utf-8")
    (target / "annotations" / "stale.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(SampleDirectoryError, match="--force"):
        make_sample(target, seed=2, render_videos=False)
    make_sample(target, seed=2, force=True, render_videos=False)
    assert (target / "NOTES.md").read_text(encoding="utf-8") == "mine"
    assert not (target / "annotations" / "stale.jsonl").exists()
    assert _annotation_bytes(target) != first
    assert read_truth(target)["seed"] == 2


def test_an_interrupted_sample_is_still_recognised(tmp_path: Path) -> None:
    target = tmp_path / "partial"
    target.mkdir()
    write_marker(target, seed=0)
    assert is_sample_dir(target)
    assert read_truth(target)["complete"] is False
    make_sample(target, render_videos=False, force=True)
    assert read_truth(target)["complete"] is True
