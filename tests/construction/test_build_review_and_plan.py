"""Before spending: the dry-run plan, curation from meta.json durations, and the human review step."""

from __future__ import annotations

import asyncio
import csv
import itertools
import json
import shutil
from pathlib import Path

import pytest
from build_helpers import build_config, run_build, subset
from build_responder import RETRY_MARK, ScriptedLab
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.construction import CurationSettings, build_candidates
from expvid.fakes.models.server import LoopbackServer
from expvid.schema import DataError

runner = CliRunner()


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return {row["video_id"]: row for row in csv.DictReader(handle)}


def _write(path: Path, rows: dict[str, dict[str, str]]) -> None:
    fields = list(next(iter(rows.values())))
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows.values())


def test_dry_run_plans_every_stage_with_prices_per_role_and_asks_nothing(
    sample_sources, tmp_path, lab_server
):
    sources = subset(sample_sources, tmp_path / "sources", ["61842", "66708"])
    out = tmp_path / "out"
    before = len(lab_server.requests)
    args = ["build", str(sources), "--out", str(out), "--llm", f"openai:r1@{lab_server.openai_base_url}",
            "--min-duration", "60", "--max-duration", "900", "--blind-samples", "2",
            "--price", "llm=0.55,2.19", "--dry-run"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(lab_server.requests) == before and not out.exists()
    lines = {line.split("|")[1].strip(): line for line in result.output.splitlines() if line.startswith("| ")}
    for stage in ("curation", "level1", "level2", "level3", "blind_audit", "total"):
        assert stage in lines, result.output
    cells = [c.strip() for c in lines["curation"].split("|")]
    assert cells[3] == "2"  # one call per transcript
    blind = [c.strip() for c in lines["blind_audit"].split("|")]
    assert blind[2] == "blind" and blind[6] != "unknown"  # priced like the drafting model it is
    total = [c.strip() for c in lines["total"].split("|")]
    assert float(total[6]) > 0

    # After the same build, nothing costs more.
    built = runner.invoke(app, [a for a in args if a != "--dry-run"] + ["--quiet"])
    assert built.exit_code == 0, built.output
    result = runner.invoke(app, args)
    lines = {line.split("|")[1].strip(): line for line in result.output.splitlines() if line.startswith("| ")}
    for stage in ("curation", "level1", "level2", "level3", "blind_audit", "total"):
        assert [c.strip() for c in lines[stage].split("|")][3] == "0", result.output
    # The same sources with another model (or settings) are planned again: the saved stages were made
    # by another model, and the response cache has none of its replies.
    other = runner.invoke(app, [a.replace("openai:r1@", "openai:r2@") for a in args])
    lines = {line.split("|")[1].strip(): line for line in other.output.splitlines() if line.startswith("| ")}
    assert [c.strip() for c in lines["curation"].split("|")][3] == "2", other.output
    level1 = [c.strip() for c in lines["level1"].split("|")]
    assert int(level1[3]) > 0 and level1[7] == "measured"  # reply sizes measured by the first build


def test_curation_scores_transcripts_whose_videos_are_not_on_disk(sample_sources, tmp_path, lab_server):
    sources = tmp_path / "sources"
    subset(sample_sources, sources, ["61842"])
    remote = sources / "66708"
    remote.mkdir()
    for name in ("transcript.srt", "paper.md"):
        shutil.copy(sample_sources / "66708" / name, remote / name)
    meta = json.loads((sample_sources / "66708" / "meta.json").read_text())
    meta["duration"] = 140.0
    (remote / "meta.json").write_text(json.dumps(meta))
    out = tmp_path / "out"
    report = run_build(sources, out, lab_server, blind_samples=0)
    curation = report["curation"]
    assert curation["kept"] == ["61842"] and curation["videos_needed"] == ["66708"]
    entry = next(
        e
        for e in json.loads((out / "curation_report.json").read_text())["entries"]
        if e["video_id"] == "66708"
    )
    assert entry["scores"] and entry["duration"] == 140.0 and entry["needs_video"]
    assert {
        row["video_id"] for row in map(json.loads, (out / "experiments.jsonl").read_text().splitlines())
    } == {"61842"}


def test_review_stops_after_curation_and_an_exclude_list_survives_and_keeps_the_iqr(sample_sources, tmp_path):
    sources = subset(sample_sources, tmp_path / "sources", ["61842", "62517", "63090", "64455", "67001"])
    out = tmp_path / "out"
    iqr = CurationSettings()  # the paper's rule: the interquartile range of all durations
    with LoopbackServer(ScriptedLab()) as server:
        stopped = run_build(sources, out, server, curation=iqr, review=True)
        kinds = {"\n".join(r.texts).split("\n", 1)[0][:40] for r in server.requests}
        assert len(server.requests) == 5 and len(kinds) == 1  # only the transcript scores
    assert stopped["stopped_after"] == "curation" and not (out / "annotations").exists()
    rows = _rows(out / "curation.csv")
    assert set(rows) == {"61842", "62517", "63090", "64455", "67001"}
    kept = [v for v, row in rows.items() if row["decision"] == "keep"]
    assert len(kept) >= 2, rows
    rule = stopped["curation"]["duration_rule"]

    excluded = kept[0]
    rows[excluded]["review"] = "exclude"
    rows[excluded]["note"] = "screen recording"
    _write(out / "curation.csv", rows)
    with LoopbackServer(ScriptedLab()) as server:
        report = run_build(sources, out, server, curation=iqr, levels=(3,), blind_samples=0)
    assert report["curation"]["duration_rule"] == rule  # the exclusion did not move the IQR
    assert excluded not in report["curation"]["kept"]
    assert set(report["curation"]["kept"]) == set(kept) - {excluded}
    assert "excluded by review (screen recording)" in report["curation"]["rejected"][excluded]
    again = _rows(out / "curation.csv")  # rewritten with fresh scores, the review carried over
    assert again[excluded]["review"] == "exclude" and again[excluded]["note"] == "screen recording"

    again[kept[1]]["review"] = "maybe"
    _write(out / "curation.csv", again)
    with (
        pytest.raises(DataError, match=r"curation\.csv:\d+: review 'maybe'"),
        LoopbackServer(ScriptedLab()) as server,
    ):
        run_build(sources, out, server, curation=iqr, levels=(3,), blind_samples=0)


def test_cli_review_prints_where_to_edit(sample_sources, tmp_path, lab_server):
    sources = subset(sample_sources, tmp_path / "sources", ["61842"])
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["build", str(sources), "--out", str(out), "--llm", f"openai:r1@{lab_server.openai_base_url}",
         "--min-duration", "60", "--max-duration", "900", "--review", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = result.output.replace("\n", "")  # rich wraps long paths at the terminal width
    assert "stopped after curation" in printed and "curation.csv" in printed


def test_a_transcript_longer_than_the_context_is_segmented_in_windows(sample_sources, tmp_path):
    sources = subset(sample_sources, tmp_path / "sources", ["61842"])
    with LoopbackServer(ScriptedLab()) as server:
        whole = run_build(sources, tmp_path / "whole", server, levels=(2,), blind_samples=0)
        server.reset()
        config = build_config(sources, tmp_path / "windows", server, levels=(2,), blind_samples=0,
                              context_tokens=4000, max_tokens=1024)  # fmt: skip
        windowed = asyncio.run(build_candidates(config))
        segmentations = [
            r for r in server.requests
            if "segment a scientific experiment" in "\n".join(r.texts) and RETRY_MARK not in "\n".join(r.texts)
        ]  # fmt: skip
    assert len(segmentations) >= 2 and "transcript_windows" not in json.dumps(whole["notes"])
    assert len(windowed["notes"]["61842/level2"]["transcript_windows"]) == len(segmentations)
    # The sample's pauses are all alike, so the window edge may fall inside a stage, which then comes
    # back as two segments; the merged segments are in time order and never overlap.
    assert (
        windowed["items"]["sequence_generation"]["kept"] >= whole["items"]["sequence_generation"]["kept"] > 0
    )
    segments = [
        json.loads(line) for line in (tmp_path / "windows" / "segments.jsonl").read_text().splitlines()
    ]
    spans = [(s["start"], s["end"]) for s in segments]
    assert spans == sorted(spans) and all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
