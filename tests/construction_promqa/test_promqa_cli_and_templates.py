"""`expvid build --recipe promqa` from the command line, the dry run, and the frame / image templates."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import numpy as np
from PIL import Image
from promqa_build_helpers import read_json, run
from promqa_lab import PromqaLab
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer
from expvid.media.plan import keep_last_pick
from expvid.media.synth import read_frame_code
from expvid.suites.promqa.sample_sources import FPS


def test_option_mistakes_fail_before_any_work(sample_sources: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    base = [
        "build",
        str(sample_sources),
        "--out",
        str(tmp_path / "out"),
        "--llm",
        "openai:m@http://127.0.0.1:9/v1",
    ]
    unknown = runner.invoke(app, [*base, "--recipe", "promqa", "-R", "colour=blue"])
    assert unknown.exit_code == 2 and "colour" in unknown.output and "settings:" in unknown.output
    template = runner.invoke(app, [*base, "--recipe", "promqa", "-R", "template=step-poem"])
    assert template.exit_code == 2 and "step-poem" in template.output
    recipe = runner.invoke(app, [*base, "--recipe", "sfe"])
    assert recipe.exit_code == 2 and "unknown recipe" in recipe.output
    expvid_only = runner.invoke(app, [*base, "--recipe", "promqa", "--vlm", "openai:x"])
    assert expvid_only.exit_code == 2 and "--vlm" in expvid_only.output
    stray = runner.invoke(app, [*base, "-R", "next=3"])
    assert stray.exit_code == 2 and "-R" in stray.output
    for other in ("promqa", "scivideobench"):  # the model-spec and URL checks of every command
        no_scheme = runner.invoke(app, [*base[:-1], "openai:m@127.0.0.1:9/v1", "--recipe", other])
        assert no_scheme.exit_code == 2 and "without a scheme" in no_scheme.output, no_scheme.output
        bad_url = runner.invoke(
            app, [*base[:-1], "openai:m", "--base-url", "127.0.0.1:9/v1", "--recipe", other]
        )
        assert bad_url.exit_code == 2 and "not an http(s) URL" in bad_url.output, bad_url.output
    assert not (tmp_path / "out").exists()


def test_the_dry_run_plans_every_call_and_asks_nothing(sample_sources: Path, tmp_path: Path) -> None:
    with LoopbackServer(PromqaLab()) as server:
        result = CliRunner().invoke(
            app,
            ["build", str(sample_sources), "--recipe", "promqa", "--out", str(tmp_path / "out"), "--dry-run",
             "--llm", f"openai:gen-a@{server.openai_base_url}", "-R", "template=step-target,video-target",
             "-R", "next=8", "-R", "missing=8", "--price", "llm=2.5,10"],
        )  # fmt: skip
        assert server.requests == []
    assert result.exit_code == 0, result.output
    assert (
        "| step-target | openai:gen-a | llm | " in result.output
        and "| video-target | openai:gen-a |" in result.output
    )
    assert "| total |" in result.output
    assert not (tmp_path / "out").exists()


def test_video_and_image_templates_send_frames_and_the_recipe_graph(
    sample_sources: Path, tmp_path: Path
) -> None:
    lab = PromqaLab()
    with LoopbackServer(lab) as server:
        report = run(sample_sources, tmp_path / "out", server, templates=("video-target", "step-image"),
                     frames=6, max_side=96)  # fmt: skip
        requests = list(server.requests)
    records = {r["question_id"]: r for r in read_json(tmp_path / "out" / "examples.json")}
    provenance = {
        json.loads(line)["question_id"]: json.loads(line)
        for line in (tmp_path / "out" / "provenance.jsonl").read_text().splitlines()
    }
    assert report["total_items"] == len(records) > 0
    assert {r["generation"]["template_type"] for r in records.values()} == {"video-target", "step-image"}
    # The video template's text has no step list, so two prefixes can share a prompt: match by frames too.
    by_prompt: dict[str, list[dict]] = {}
    for record in records.values():
        by_prompt.setdefault(record["generation"]["prompt"], []).append(record)
    frames_seen = 0
    for request in requests:
        candidates = by_prompt[request.texts[0]]
        record = candidates[0]
        if record["generation"]["template_type"] == "step-image":
            assert len(request.images) == 1 and request.image_mimes == ["image/png"]
            assert Image.open(io.BytesIO(request.images[0])).size[0] > 100  # a drawn graph, not a frame
            continue
        codes = [
            read_frame_code(np.asarray(Image.open(io.BytesIO(d)).convert("RGB"))) for d in request.images
        ]
        # 1 fps over [0, end of the prefix), thinned from the end to 6 with the last frame kept.
        expected = [
            [
                FPS * second
                for second in keep_last_pick(math.ceil(provenance[r["question_id"]]["source"]["end"]), 6)
            ]
            for r in candidates
        ]
        assert codes in expected
        assert "The images are photos taken during the cooking activity." in request.texts[0]
        frames_seen += len(codes)
    assert frames_seen > 0
