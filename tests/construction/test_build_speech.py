"""The ExpVid recipe on an experiment without a transcript: speech-to-text, then curation and drafting.

The sample's experiment 61842 comes as `expvid sample make --recipe ...` writes it: the video with
its narration spoken by espeak-ng, the paper, no transcript. The loopback server speaks OpenAI's
transcription protocol and "hears" the uploaded audio (speech regions by energy); what it says in
each region is the sample's own narration at that time, so the scripted lab recognises the steps.
Curation then judges the transcript speech-to-text made, and the items are drafted from it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import srt
from build_helpers import SAMPLE_BOUNDS, read_jsonl
from build_responder import ScriptedLab
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.fakes.models.server import LoopbackServer
from expvid.fakes.transcription import TranscriptionScript, TranscriptionServer, speech_regions
from expvid.media.audio import extract_audio

VIDEO_ID = "61842"
runner = CliRunner()


def _require_espeak() -> None:
    if shutil.which("espeak-ng") is None:
        message = "espeak-ng is not installed (apt-get install -y espeak-ng)"
        if os.environ.get("EXPVID_REQUIRE_ESPEAK") == "1":
            pytest.fail(message + " and EXPVID_REQUIRE_ESPEAK=1")
        pytest.skip(message)


@pytest.fixture(scope="module")
def narrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sources/61842/{video.mp4 with narration, paper.md, meta.json}: no transcript."""
    _require_espeak()
    from expvid.suites.sample.speech_sources import make_speech_sources

    root = tmp_path_factory.mktemp("speech") / "sample"
    made = make_speech_sources(root, experiments=1)
    assert made.experiments == (VIDEO_ID,)
    assert not list((root / "sources" / VIDEO_ID).glob("transcript.*"))
    return root / "sources"


def heard(video: Path) -> list[str]:
    """What the server says in each speech region of `video`'s audio: the sample's narration cue whose
    span holds the region's middle (a cue spoken as two regions is said in its first)."""
    from expvid.suites.sample.scripts import load_scripts
    from expvid.suites.sample.sources import transcript_srt
    from expvid.suites.sample.timeline import plan_timeline

    script = next(s for s in load_scripts() if s.video_id == VIDEO_ID)
    cues = list(srt.parse(transcript_srt(script, plan_timeline(script, 0))))
    track = extract_audio(video)
    texts, said = [], set()
    for start, end in speech_regions(track.samples, track.rate):
        middle = (start + end) / 2
        cue = next((c for c in cues if c.start.total_seconds() <= middle < c.end.total_seconds()), None)
        texts.append("" if cue is None or cue.index in said else cue.content.replace("\n", " "))
        if cue is not None:
            said.add(cue.index)
    assert len(said) == len(cues)  # every cue is heard
    return texts


def build(sources: Path, out: Path, lab: LoopbackServer, stt: TranscriptionServer | None, *extra: str) -> Any:
    args = [
        "build", str(sources), "--out", str(out), "--llm", f"openai:r1@{lab.openai_base_url}",
        "--min-duration", "60", "--max-duration", "900", "--blind-samples", "1", "--no-domain-audit",
        "--max-retries", "0", "--price", "llm=0.55,2.19", "--preset", "ultrafast", "--jobs", "1", "--quiet",
    ]  # fmt: skip
    if stt is not None:
        args += ["-R", f"stt=openai:whisper-1@{stt.openai_base_url}", "-R", "stt_price=0.006"]
    return runner.invoke(app, [*args, *extra])


@dataclass
class Transcribed:
    sources: Path
    out: Path
    lab: LoopbackServer
    stt: TranscriptionServer
    dry_run: str
    report: dict[str, Any]


@pytest.fixture(scope="module")
def transcribed(narrated: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Transcribed]:
    """The dry run, then the build, of the narrated experiment through the loopback servers."""
    out = tmp_path_factory.mktemp("transcribed") / "candidates"
    video = narrated / VIDEO_ID / "video.mp4"
    with (
        LoopbackServer(ScriptedLab()) as lab,
        TranscriptionServer(TranscriptionScript(texts=heard(video))) as stt,
    ):
        dry = build(narrated, out, lab, stt, "--dry-run")
        assert dry.exit_code == 0, dry.output
        assert not out.exists() and not stt.transcriptions
        result = build(narrated, out, lab, stt)
        assert result.exit_code == 0, result.output
        report = json.loads((out / "build_report.json").read_text())
        yield Transcribed(narrated, out, lab, stt, dry.output, report)


def test_without_an_engine_the_experiment_is_rejected_saying_how_to_transcribe_it(
    narrated: Path, tmp_path: Path
) -> None:
    with LoopbackServer(ScriptedLab()) as lab:
        plain = build(narrated, tmp_path / "plain", lab, None)
    assert plain.exit_code == 0, plain.output
    rejected = json.loads((tmp_path / "plain" / "build_report.json").read_text())["curation"]["rejected"]
    assert "-R stt=" in " ".join(rejected[VIDEO_ID])


def test_an_experiment_without_a_transcript_is_transcribed_curated_and_drafted(
    transcribed: Transcribed,
) -> None:
    assert SAMPLE_BOUNDS.min_duration == 60  # the bounds the arguments of `build` repeat
    out, report, stt, lab = transcribed.out, transcribed.report, transcribed.stt, transcribed.lab
    video = transcribed.sources / VIDEO_ID / "video.mp4"
    # The dry run priced the audio to transcribe (2.5 min x $0.006) and planned the rest without it.
    assert "| transcription | stt | 1 | 0 | 0 | 0.0150 |" in transcribed.dry_run
    assert "0 found in the transcript cache" in transcribed.dry_run
    assert len(stt.transcriptions) == 1 and stt.transcriptions[0].fields["model"] == ["whisper-1"]
    speech = report["speech"]
    assert speech["transcribed"] == [VIDEO_ID] and speech["transcribed_this_run"] == 1
    assert speech["cost_this_run"] == pytest.approx(150.4 / 60 * 0.006, rel=0.01)
    assert report["cost"]["this_run"] == pytest.approx(
        report["cost"]["tokens_this_run"] + speech["cost_this_run"]
    )
    assert report["curation"]["kept"] == [VIDEO_ID] and not report["failed_units"]
    # Curation judged the transcript speech-to-text made: its cues at the times the audio has them.
    transcript = json.loads((out / "transcripts" / f"{VIDEO_ID}.json").read_text())
    first = transcript["segments"][0]
    assert first["text"].startswith("Using fine-tip forceps") and first["start"] == pytest.approx(0.24)
    curation_prompts = [r for r in lab.requests if "Rate the quality" in "\n".join(r.texts)]
    assert len(curation_prompts) == 1 and "00:00.240" in "\n".join(curation_prompts[0].texts)
    # Drafted from it: every level, items whose narration is the transcribed text.
    assert report["total_items"] > 20
    for task in ("materials", "sequence_ordering", "scientific_discovery"):
        assert report["items"][task]["kept"], task
    materials = read_jsonl(out / "annotations/level1/materials.jsonl")
    spoken = " ".join(s["text"] for s in transcript["segments"])
    assert materials and all(row["asr_caption"] in spoken for row in materials)
    # Provenance of the transcript in the sidecars (the platform shows it from provenance.jsonl).
    (row,) = read_jsonl(out / "experiments.jsonl")
    assert row["transcript"]["engine"] == "openai" and row["transcript"]["model"] == "whisper-1"
    assert row["transcript"]["language"] == "english"
    assert row["transcript_file"] == f"transcripts/{VIDEO_ID}.json"
    lines = read_jsonl(out / "provenance.jsonl")
    assert {line["transcript"]["audio_sha256"] for line in lines} == {extract_audio(video).sha256}


def test_a_rerun_repays_nothing_and_redo_transcription_asks_once_more(transcribed: Transcribed) -> None:
    out, stt, lab = transcribed.out, transcribed.stt, transcribed.lab

    def annotations() -> dict[Path, bytes]:
        return {p.relative_to(out): p.read_bytes() for p in (out / "annotations").rglob("*.jsonl")}

    before, sent = annotations(), len(lab.requests)
    clips = sorted(p.name for p in (out / "videos").rglob("*.mp4"))
    # The transcript comes from the cache (named by the audio), every model reply from the response
    # cache, and every id, letter and clip name stays.
    again = build(transcribed.sources, out, lab, stt)
    assert again.exit_code == 0, again.output
    rerun = json.loads((out / "build_report.json").read_text())
    assert len(stt.transcriptions) == 1 and len(lab.requests) == sent
    assert rerun["speech"]["cache_hits"] == 1 and rerun["speech"]["cost_this_run"] == 0
    assert annotations() == before and sorted(p.name for p in (out / "videos").rglob("*.mp4")) == clips
    dry = build(transcribed.sources, out, lab, stt, "--dry-run")
    assert "| transcription | stt | 0 |" in dry.output and "1 found in the transcript cache" in dry.output
    # --redo transcription:ID asks the engine again, once; the same words draft the same items from
    # the response cache, and later runs reuse the new transcript.
    redo = build(transcribed.sources, out, lab, stt, "--redo", f"transcription:{VIDEO_ID}")
    assert redo.exit_code == 0, redo.output
    assert len(stt.transcriptions) == 2 and len(lab.requests) == sent
    assert annotations() == before
    assert read_jsonl(out / "experiments.jsonl")[0]["transcript"]["epoch"] == 1
    assert build(transcribed.sources, out, lab, stt).exit_code == 0
    assert len(stt.transcriptions) == 2


def test_reviewers_see_where_the_narration_came_from(transcribed: Transcribed, tmp_path: Path) -> None:
    """Level-1, Level-2 and Level-3 review pages name the transcript's engine, model and language."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "platform"))
    from platform_env import FAST_PASSWORDS, add_users, password_of
    from platform_http import Browserless
    from sqlalchemy import select

    from expvid.platform import PlatformSettings
    from expvid.platform.db.engine import Database
    from expvid.platform.db.migrate import upgrade_to_head
    from expvid.platform.db.models import Item
    from expvid.platform.services.importer import import_candidates
    from expvid.platform.testing import LiveServer
    from expvid.platform.web.app import create_app

    url = f"sqlite:///{tmp_path / 'review.db'}"
    upgrade_to_head(url)
    database = Database(url)
    add_users(database, {"alice": ("annotator", []), "bob": ("annotator", [])})
    assert not import_candidates(database, transcribed.out).problems
    with database.read() as db:
        items = {i.task: i.id for i in db.scalars(select(Item).order_by(Item.key))}
    pages = {task: items[task] for task in ("materials", "video_verification", "scientific_discovery")}
    settings = PlatformSettings(database_url=url, passwords=FAST_PASSWORDS)
    try:
        with LiveServer(create_app(settings, database=database)) as live:
            alice = Browserless(live.url, "alice", password_of("alice"))
            for task, item_id in pages.items():
                page = alice.client.get(f"/items/{item_id}").text
                assert 'data-testid="transcript-origin"' in page, task
                assert "speech-to-text · openai · whisper-1 · language english" in page, task
            alice.close()
    finally:
        database.dispose()


def test_a_failed_transcription_is_a_failed_unit_asked_again(narrated: Path, tmp_path: Path) -> None:
    out = tmp_path / "candidates"
    with LoopbackServer(ScriptedLab()) as lab, TranscriptionServer(api_key="sk-right") as stt:
        os.environ["EXPVID_TEST_STT_KEY"] = "sk-wrong"
        try:
            result = build(narrated, out, lab, stt, "-R", "stt_api_key_env=EXPVID_TEST_STT_KEY")
        finally:
            del os.environ["EXPVID_TEST_STT_KEY"]
        assert result.exit_code == 1, result.output
        report = json.loads((out / "build_report.json").read_text())
        (failed,) = report["failed_units"]
        assert failed["stage"] == "transcription" and "Incorrect API key provided" in failed["message"]
        assert str(narrated / VIDEO_ID / "video.mp4") in failed["message"]
        assert "speech-to-text failed" in " ".join(report["curation"]["rejected"][VIDEO_ID])
        assert not lab.requests  # nothing was asked about an experiment without its narration


def test_sample_make_names_the_recipes_with_sample_inputs(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sample", "make", str(tmp_path / "x"), "--recipe", "mmvu"])  # a suite
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert (
        "unknown recipe 'mmvu'" in said
        and "recipes with sample inputs: expvid, promqa, scivideobench" in said
    )
    assert not (tmp_path / "x").exists()


def test_a_video_without_sound_is_rejected_not_retried(narrated: Path, tmp_path: Path) -> None:
    import av

    folder = tmp_path / "sources" / VIDEO_ID
    folder.mkdir(parents=True)
    for name in ("paper.md", "meta.json"):
        shutil.copy(narrated / VIDEO_ID / name, folder / name)
    with (
        av.open(str(narrated / VIDEO_ID / "video.mp4")) as reader,
        av.open(str(folder / "video.mp4"), "w") as writer,
    ):
        stream = writer.add_stream_from_template(reader.streams.video[0])
        for packet in reader.demux(reader.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                writer.mux(packet)
    with LoopbackServer(ScriptedLab()) as lab, TranscriptionServer() as stt:
        result = build(tmp_path / "sources", tmp_path / "out", lab, stt)
        assert result.exit_code == 0, result.output  # nothing a re-run could change: not a failed unit
        assert not stt.transcriptions
    reasons = json.loads((tmp_path / "out" / "build_report.json").read_text())["curation"]["rejected"][
        VIDEO_ID
    ]
    assert "no audio stream for speech-to-text to hear" in " ".join(reasons)
