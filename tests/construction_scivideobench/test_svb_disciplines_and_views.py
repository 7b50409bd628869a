"""Disciplines placed among SciVideoBench's four (or refused), and what the QA generator sees of the
video (frames, one video, or text only) with the dry run pricing both."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from svb_helpers import SvbBuild, build_args
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.construction.recipes.scivideobench.disciplines import DisciplineMap
from expvid.fakes.models.server import LoopbackServer
from expvid.schema import DataError

sys.path.insert(0, str(Path(__file__).parents[1] / "platform"))

from platform_env import add_users

from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.services.importer import import_candidates

runner = CliRunner()


def _labelled(svb_build: SvbBuild, root: Path, labels: dict[str, str]) -> Path:
    """A sources folder whose experiments are the first sample experiment under other ids and labels."""
    first = sorted(svb_build.sources.iterdir())[0]
    meta = json.loads((first / "meta.json").read_text(encoding="utf-8"))
    for video_id, label in labels.items():
        folder = root / video_id
        folder.mkdir(parents=True)
        for name in ("video.mp4", "paper.md"):
            (folder / name).symlink_to(first / name)
        (folder / "meta.json").write_text(
            json.dumps({**meta, "id": video_id, "discipline": label}), encoding="utf-8"
        )
    return root


def test_labels_are_placed_among_the_four_or_refused(tmp_path: Path) -> None:
    places = DisciplineMap()
    assert places.place("Neuroscience", None).__dict__ == {"discipline": "Biology", "subject": "Neuroscience"}
    assert places.place(" organic  chemistry", None).discipline == "Chemistry"
    assert places.place("Engineering", None).__dict__ == {"discipline": "Physics", "subject": "Engineering"}
    assert places.place("physics", "Plasma Physics").__dict__ == {
        "discipline": "Physics",
        "subject": "Plasma Physics",
    }
    assert places.place("Oncology", "Breast cancer").subject == "Breast cancer"
    with pytest.raises(ValueError, match="subject of both Biology and Physics in SciVideoBench's appendix B"):
        places.place("Microfluidics", None)
    with pytest.raises(
        ValueError, match=r"'Immunology and Infection' is not one of SciVideoBench's disciplines"
    ):
        places.place("Immunology and Infection", None)
    mapping = tmp_path / "jove.json"
    mapping.write_text(json.dumps({"Immunology and Infection": "medicine"}), encoding="utf-8")
    placed = DisciplineMap.load(mapping).place("Immunology and Infection", None)
    assert placed.__dict__ == {"discipline": "Medicine", "subject": "Immunology and Infection"}
    mapping.write_text(json.dumps({"Cancer Research": "Oncology"}), encoding="utf-8")
    with pytest.raises(DataError, match=r"jove.json: 'Cancer Research' maps to 'Oncology'; SciVideoBench's"):
        DisciplineMap.load(mapping)


def test_a_neuroscience_experiment_is_released_as_biology_scored_and_reviewable(
    svb_build: SvbBuild, tmp_path: Path
) -> None:
    sources = _labelled(svb_build, tmp_path / "sources", {"neuro": "Neuroscience", "astro": "Astrology"})
    out = tmp_path / "out"
    result = runner.invoke(app, build_args(sources, out, svb_build.llm, svb_build.stt))
    assert result.exit_code == 0, result.output
    assert (
        "rejected astro: " in result.output and "'Astrology' is not one of SciVideoBench's" in result.output
    )
    report = json.loads((out / "build_report.json").read_text(encoding="utf-8"))
    assert list(report["experiments"]["rejected"]) == ["astro"]
    rows = [
        json.loads(line) for line in (out / "scivideobench_1k.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert rows and {(r["video_id"], r["discipline"], r["subject"]) for r in rows} == {
        ("neuro", "Biology", "Neuroscience")
    }
    # the source's symlinked video is released as the file itself, not as a copy of the link
    released = out / "videos" / "jove_neuro.mp4"
    assert released.is_file() and not released.is_symlink()
    # eval's four discipline columns count every item
    run = tmp_path / "run"
    evaluated = runner.invoke(app, ["eval", "--suite", "scivideobench", "--data", str(out), "--model", "random:0",
                                    "--out", str(run), "--frames", "all=2", "--size", "64", "--no-cache", "--quiet"])  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.output
    scores = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    assert scores["disciplines"]["Biology"]["levels"]["Overall"]["n"] == len(rows)
    assert set(scores["disciplines"]) == {"Biology"}
    # the platform has annotators for it: the biologists
    url = f"sqlite:///{tmp_path / 'review.db'}"
    upgrade_to_head(url)
    database = Database(url)
    add_users(database, {"alice": ("annotator", ["Biology"]), "bob": ("annotator", ["Biology"]),
                         "carol": ("annotator", ["Physics"])})  # fmt: skip
    imported = import_candidates(database, out)
    database.dispose()
    assert imported.total_imported == len(rows)
    assert imported.assignment.items_fully_assigned == len(rows)
    assert imported.assignment.short_of_annotators == {}


def _generator_requests(requests: list) -> list:  # type: ignore[type-arg]
    return [r for r in requests if any("Write questions about the experiment below" in t or
                                       "Analyse the experiment below" in t for t in r.texts)]  # fmt: skip


def test_the_generator_sees_the_video_or_only_text_and_the_dry_run_prices_both(
    svb_build: SvbBuild, tmp_path: Path
) -> None:
    from svb_lab import SvbLab

    sources = tmp_path / "sources"
    sources.mkdir()
    first = sorted(svb_build.sources.iterdir())[0]
    (sources / first.name).symlink_to(first, target_is_directory=True)
    with LoopbackServer(SvbLab()) as llm:
        base = build_args(sources, tmp_path / "video", llm, svb_build.stt)
        # the dry run (no cache: upper bounds) prices the generator with its frames and without
        forecast = runner.invoke(app, [*base, "--dry-run"])
        assert forecast.exit_code == 0, forecast.output
        costs = re.search(r"Total: \$([\d.]+)\n\nQA generator sees: frames\. With -R generator=text "
                          r"\(without the (\d+) frame tokens of its calls\): \$([\d.]+)", forecast.output)  # fmt: skip
        assert costs, forecast.output
        assert int(costs.group(2)) == 2 * 4 * 500  # two generator calls x 4 frames x 500 tokens
        assert float(costs.group(1)) - float(costs.group(3)) == pytest.approx(4000 * 1.25 / 1e6, abs=1e-4)
        text_forecast = runner.invoke(app, [*base, "--dry-run", "-R", "generator=text"])
        assert (
            "QA generator sees: text. With -R generator=frames (with the 4000 frame tokens"
            in text_forecast.output
        )
        assert f"Total: ${costs.group(3)}" in text_forecast.output
        # as one video (a server that takes video): the frames go as one video_url, their times stated
        result = runner.invoke(app, [*base, "-R", "generator=video"])
        assert result.exit_code == 0, result.output
        generator = _generator_requests(llm.requests)
        assert len(generator) == 2
        for request in generator:
            assert len(request.videos) == 1 and len(request.videos[0]) == 4 and not request.images
            assert any(
                t.startswith("The experiment video: 4 frames sampled uniformly") for t in request.texts
            )
        evaluator = [
            r for r in llm.requests if any("Answer the question about the experiment" in t for t in r.texts)
        ]
        assert evaluator and all(len(r.images) == 4 and not r.videos for r in evaluator)
        # text only: no frames at all for the generator
        sent = len(llm.requests)
        result = runner.invoke(
            app, [*build_args(sources, tmp_path / "text", llm, svb_build.stt), "-R", "generator=text"]
        )
        assert result.exit_code == 0, result.output
        generator = _generator_requests(llm.requests[sent:])
        assert len(generator) == 2 and all(not r.images and not r.videos for r in generator)


def test_video_input_with_a_model_that_takes_only_images_stops_before_any_call(
    svb_build: SvbBuild, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # OpenAI's own API needs a key before anything is checked
    args = build_args(svb_build.sources, tmp_path / "out", svb_build.llm, svb_build.stt)
    at = args.index("--base-url")
    args[at + 1] = "https://api.openai.com/v1"  # OpenAI's chat API takes images, not videos
    result = runner.invoke(app, [*args, "-R", "generator=video"])
    assert result.exit_code == 2, result.output
    assert "takes images, not videos" in result.output or "takes frames as images only" in result.output
    assert not (tmp_path / "out" / "scivideobench_1k.jsonl").exists()
