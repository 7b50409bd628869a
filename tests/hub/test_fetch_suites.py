"""`expvid data fetch` for SciVideoBench (loose videos or an archive), SFE (JSONL or parquet) and ProMQA (GitHub)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.hub.fetch import FetchRequest, fetch_release
from expvid.hub.record import read_fetch_record
from expvid.suites.promqa.loader import load_promqa
from expvid.suites.scivideobench import load_scivideobench, make_scivideobench_sample
from expvid.suites.sfe import load_sfe, make_sfe_sample

runner = CliRunner()
PROMQA_DATA = Path("/work/shared/data/promqa")


def _served(hub) -> list[str]:
    return [r.path.split("#", 1)[1] for r in hub.requests if r.method == "GET" and "#" in r.path]


@pytest.fixture(scope="module")
def svb_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("svb") / "release"
    make_scivideobench_sample(root)
    # Video 10003 keeps only its hypothetical questions, so a conceptual-only fetch does not need it.
    lines = (root / "scivideobench_1k.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [
        line
        for line in lines
        if json.loads(line)["video_id"] != "10003"
        or json.loads(line)["question_type"] == "Hypothetical Reasoning"
    ]
    (root / "scivideobench_1k.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return root


def test_scivideobench_fetches_the_question_file_and_only_the_selected_tasks_videos(
    hub, svb_sample, tmp_path
):
    files = {
        p.relative_to(svb_sample).as_posix(): p
        for p in svb_sample.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }
    sha = hub.commit("groundmore/scivideobench", files)
    outcome = fetch_release(
        FetchRequest(
            suite="scivideobench",
            out=tmp_path / "svb",
            tasks=["conceptual"],
            endpoint=hub.url,
            progress=False,
        )
    )
    served = _served(hub)
    assert "scivideobench_1k.jsonl" in served and not any("10003" in p for p in served)
    assert {p for p in served if "jove_" in p} == {"videos/jove_10001.mp4", "videos/jove_10002.MP4"}
    assert outcome.complete and outcome.record.revision == sha and outcome.record.tasks == ["conceptual"]
    local = load_scivideobench(tmp_path / "svb", tasks=["conceptual"])
    assert (
        len(local)
        == len(load_scivideobench(svb_sample, tasks=["conceptual"]))
        == outcome.record.verification.items
    )


def test_scivideobench_videos_packed_in_an_archive_are_unpacked(hub, svb_sample, tmp_path):
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w") as archive:
        for video in sorted((svb_sample / "videos").iterdir()):
            archive.write(video, f"scivideobench_videos/{video.name}")
    files: dict[str, bytes | Path] = {
        "scivideobench_1k.jsonl": svb_sample / "scivideobench_1k.jsonl",
        "videos.zip": packed.getvalue(),
    }
    hub.commit("groundmore/scivideobench", files)
    outcome = fetch_release(
        FetchRequest(suite="scivideobench", out=tmp_path / "svb", endpoint=hub.url, progress=False)
    )
    assert outcome.complete, outcome.problems
    assert (tmp_path / "svb/videos/jove_10003.mkv").read_bytes() == (
        svb_sample / "videos/jove_10003.mkv"
    ).read_bytes()
    assert outcome.record.verification.media_readable == 3


@pytest.fixture(scope="module")
def sfe_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sfe") / "release"
    make_sfe_sample(root)
    return root


def test_sfe_grounding_fetch_downloads_only_its_images(hub, sfe_sample, tmp_path):
    files = {
        p.relative_to(sfe_sample).as_posix(): p
        for p in sfe_sample.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }
    hub.commit("PrismaX/SFE", files)
    outcome = fetch_release(
        FetchRequest(suite="sfe", out=tmp_path / "sfe", tasks=["grounding"], endpoint=hub.url, progress=False)
    )
    images = sorted(p for p in _served(hub) if p.startswith("images/"))
    assert images == ["images/sar_e011.png", "images/sar_e012.png"]
    assert "20250515-zh/sfe.jsonl" not in _served(hub)  # English only, unless asked
    assert outcome.complete and outcome.record.languages == ["en"]


def test_sfe_parquet_with_embedded_images_loads_as_published(hub, sfe_sample, tmp_path, monkeypatch):
    monkeypatch.setenv("EXPVID_CACHE_DIR", str(tmp_path / "cache"))
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    files: dict[str, bytes | Path] = {}
    for language in ("en", "zh"):
        rows = [
            json.loads(line)
            for line in (sfe_sample / f"20250515-{language}/sfe.jsonl")
            .read_text(encoding="utf-8")
            .splitlines()
        ]
        for row in rows:  # the `datasets` Image feature: {"bytes", "path"} per image
            row["images"] = [
                {"bytes": (sfe_sample / p).read_bytes(), "path": Path(p).name} for p in row["images"]
            ]
            row.pop("cognitive_level", None)
        buffer = io.BytesIO()
        pq.write_table(pa.Table.from_pylist(rows), buffer)
        files[f"20250515-{language}/test-00000-of-00001.parquet"] = buffer.getvalue()
    hub.commit("PrismaX/SFE", files)
    result = runner.invoke(
        app,
        [
            "data",
            "fetch",
            "sfe",
            str(tmp_path / "sfe"),
            "-S",
            "language=both",
            "--endpoint",
            hub.url,
            "--quiet",
        ],
    )
    assert result.exit_code == 0, result.output
    assert not list((tmp_path / "sfe").rglob("*.jsonl"))  # no conversion step: the parquet is read as is
    fetched = load_sfe(tmp_path / "sfe", languages=("en", "zh"))
    original = load_sfe(sfe_sample, languages=("en", "zh"))
    assert [i.id for i in fetched] == [i.id for i in original] and not fetched.problems
    assert [i.question for i in fetched] == [i.question for i in original]  # Chinese kept verbatim
    for got, want in zip(fetched, original, strict=True):
        for path, source in zip(got.media.paths, want.media.paths, strict=True):  # type: ignore[union-attr]
            assert Path(path).is_relative_to(tmp_path / "cache")  # embedded images decoded into the cache
            assert Path(path).read_bytes() == Path(source).read_bytes()  # byte for byte, not re-encoded


def test_promqa_qa_files_come_from_github_pinned_with_where_to_get_the_recordings(hub, tmp_path, monkeypatch):
    files = {f"data/{name}": (PROMQA_DATA / name).read_bytes() for name in ("examples.json", "graphs.json")}
    sha = hub.github_commit("kimihiroh/promqa", files)
    monkeypatch.setenv("EXPVID_GITHUB_API", hub.github_api_url)
    monkeypatch.setenv("EXPVID_GITHUB_RAW", hub.github_raw_url)
    result = runner.invoke(app, ["data", "fetch", "promqa", str(tmp_path / "promqa"), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "CaptainCook4D/downloader" in " ".join(result.output.split())
    record = read_fetch_record(tmp_path / "promqa")
    assert record is not None and record.revision == sha and record.source.kind == "github"
    assert (
        record.verification.items == 401
        and record.external_media
        and "videos/<recording_id>.mp4" in record.external_media
    )
    assert (tmp_path / "promqa/examples.json").read_bytes() == (PROMQA_DATA / "examples.json").read_bytes()
    assert len(load_promqa(tmp_path / "promqa", check_media=False)) == 401
    bad = runner.invoke(
        app, ["data", "fetch", "promqa", str(tmp_path / "p2"), "--revision", "nope", "--quiet"]
    )
    assert bad.exit_code == 2 and "no commit, branch or tag 'nope'" in bad.output


def test_selection_errors_name_the_valid_choices(tmp_path):
    result = runner.invoke(app, ["data", "fetch", "expvid", str(tmp_path / "x"), "--tasks", "tool"])
    assert (
        result.exit_code == 2
        and "unknown expvid task(s) ['tool']; tasks are: tools, materials" in result.output
    )
    result = runner.invoke(app, ["data", "fetch", "scivideobench", str(tmp_path / "x"), "--levels", "1"])
    assert result.exit_code == 2 and "--levels applies to ExpVid" in result.output
    result = runner.invoke(app, ["data", "fetch", "nosuch", str(tmp_path / "x")])
    assert result.exit_code == 2 and "unknown suite 'nosuch'; installed suites: expvid" in result.output
