"""Sources folders as users hand them over: other transcript formats, a PDF paper, broken folders."""

from __future__ import annotations

import json
import shutil

import pytest
from build_helpers import read_jsonl, run_build
from build_responder import ScriptedLab
from test_build_papers import write_pdf

from expvid.construction.sources import discover_sources
from expvid.fakes.models.server import LoopbackServer
from expvid.media.transcripts import read_transcript, write_transcript
from expvid.schema import DataError


def test_vtt_transcripts_pdf_papers_and_broken_folders(sample_sources, tmp_path):
    sources = tmp_path / "sources"
    good = sources / "64455"
    good.mkdir(parents=True)
    shutil.copy(sample_sources / "64455" / "video.mp4", good / "video.mp4")
    shutil.copy(sample_sources / "64455" / "meta.json", good / "meta.json")
    write_transcript(read_transcript(sample_sources / "64455" / "transcript.srt"), good / "transcript.vtt")
    paper = (sample_sources / "64455" / "paper.md").read_text().splitlines()
    write_pdf(good / "paper.pdf", [[line.lstrip("# ") for line in paper if line.strip()][:40]])
    (sources / "no_meta").mkdir()
    shutil.copy(sample_sources / "67001" / "video.mp4", sources / "no_meta" / "video.mp4")
    broken = sources / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text('{"id": "B1", "title": "x",\n "discipline": }')

    found = {e.video_id: e for e in discover_sources(sources)}
    assert set(found) == {"64455", "no_meta", "broken"}
    assert found["64455"].usable and found["64455"].transcript.suffix == ".vtt"
    assert found["64455"].paper is not None and found["64455"].paper.suffix == ".pdf"
    assert any("meta.json is missing" in p for p in found["no_meta"].problems)
    assert any("no transcript" in p for p in found["no_meta"].problems)
    assert any("meta.json:2: not valid JSON" in p for p in found["broken"].problems)

    with LoopbackServer(ScriptedLab()) as server:
        report = run_build(sources, tmp_path / "out", server, blind_samples=0, levels=(2, 3))
    assert report["curation"]["kept"] == ["64455"]
    assert any("meta.json is missing" in r for r in report["curation"]["rejected"]["no_meta"])
    assert report["items"]["sequence_generation"]["kept"] == 3
    assert report["items"]["experimental_conclusion"]["kept"] == 1  # drafted from the PDF's sections
    paper_md = (tmp_path / "out" / "papers" / "64455.md").read_text()
    assert "# Results" in paper_md and "# Discussion" in paper_md
    assert read_jsonl(tmp_path / "out" / "experiments.jsonl")[0]["full_video"] == "videos/level_3/64455.mp4"


def test_duplicate_ids_and_missing_folders_stop_the_build(sample_sources, tmp_path):
    with pytest.raises(DataError, match="sources folder not found"):
        discover_sources(tmp_path / "missing")
    sources = tmp_path / "dup"
    for name in ("a", "b"):
        (sources / name).mkdir(parents=True)
        (sources / name / "meta.json").write_text(json.dumps({"id": "X", "title": "t", "discipline": "d"}))
    with pytest.raises(DataError, match=r"experiment id 'X' is also used by .*/a"):
        discover_sources(sources)
