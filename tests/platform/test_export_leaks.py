"""A public export gives no answer away: not in file names, JSON, or the videos' own metadata.

The candidates here are built the way leaks happen: clip files named after their answers
(`clip_1_removed_step_2.mp4`, `petri_dish_answer_C.mp4`), container tags that repeat those names and
the build machine's absolute paths (as ffmpeg copies an input's title and editors write file
names), and a record carrying an extra field with a local path. Every item is verified, exported,
and every byte of the public release is scanned (raw bytes, every string inside every JSON file, the
container and stream metadata of every video) for the original names, local paths and the database.
"""

from __future__ import annotations

import getpass
import json
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import pytest
from platform_candidates import make_candidates
from platform_env import add_users
from sqlalchemy import select
from sqlalchemy.engine import make_url

from expvid.media.synth import read_frame_code, scene_frame, write_video
from expvid.platform.db.engine import Database
from expvid.platform.db.models import Item
from expvid.platform.services.errors import Actor
from expvid.platform.services.exporter import export_public
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.schema.release_layout import INTERNAL_SUFFIX
from expvid.suites.expvid_suite import load_expvid

#: Release-like names that give the answer away (the answer of each item is in its clip's name).
LEAKY = {
    "l1_materials": "videos/level_1/E1/vitronectin_solution_answer_A.mp4",
    "l1_tools": "videos/level_1/E1/petri_dish_answer_C.mp4",
    "l1_chem": "videos/level_1/E2/flask_heated_answer_C.mp4",
    "seg1": "videos/level_2/video_segments/E1/clip_1_steps_3_4_5.mp4",
    "seg2": "videos/level_2/video_segments/E1/clip_2_steps_5_6.mp4",
    "verif": "videos/level_2/video_verification/E1/clip_1_removed_step_2.mp4",
    "pred": "videos/level_2/step_prediction/E1/clip_1_next_is_step_5.mp4",
    "full": "videos/level_3/E1_pluripotent_12_hours_drug_screening.mp4",
}
ALLOWED_CONTAINER_TAGS = {"major_brand", "minor_version", "compatible_brands"}
ALLOWED_STREAM_TAGS = {"language", "handler_name", "vendor_id"}


def _tagged_video(
    target: Path, first_frame: int, frames: int, tags: dict[str, str], stream_tags: dict[str, str]
) -> None:
    """A coded synthetic clip whose container and stream carry `tags` (as editors and ffmpeg write them)."""
    plain = target.with_suffix(".plain.mp4")
    write_video(
        plain,
        (scene_frame(first_frame + i, 96, 64) for i in range(frames)),
        fps=10,
        gop=10,
        preset="ultrafast",
    )
    with av.open(str(plain)) as src, av.open(str(target), "w") as dst:
        dst.metadata.update(tags)
        out = dst.add_stream_from_template(src.streams.video[0])
        out.metadata.update(stream_tags)
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is None:
                continue
            packet.stream = out
            dst.mux(packet)
    plain.unlink()


def _leaky_candidates(root: Path) -> Path:
    for n, (key, relative) in enumerate(sorted(LEAKY.items())):
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        frames = 60 if key == "full" else 20
        _tagged_video(
            target, 10 * n, frames,
            tags={"title": Path(relative).name, "comment": f"cut from {target} on {socket.gethostname()}"},
            stream_tags={"handler_name": str(target)},
        )  # fmt: skip
    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg:  # the tool people use: a stream copy keeps the input's tags and adds its own
        verif = root / LEAKY["verif"]
        copied = verif.with_name("ffmpeg_copy.mp4")
        subprocess.run(
            [ffmpeg, "-loglevel", "error", "-i", str(verif), "-c", "copy", "-metadata", f"title={verif.name}",
             "-metadata", f"comment={verif}", str(copied)],
            check=True, timeout=60,
        )  # fmt: skip
        copied.replace(verif)
    source = root / "sources" / "E1" / "video.mp4"
    write_video(source, (scene_frame(i, 96, 64) for i in range(60)), fps=10, gop=10, preset="ultrafast")
    make_candidates(root, videos=LEAKY)
    # An extra field a tool left in a record (imports keep unknown fields).
    materials = root / "annotations" / "level1" / "materials.jsonl"
    record = json.loads(materials.read_text())
    record["source_file"] = str(root / LEAKY["l1_materials"])
    materials.write_text(json.dumps(record) + "\n")
    return root


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _forbidden(candidates: Path, db_url: str, tmp_path: Path) -> list[str]:
    names = []
    for relative in LEAKY.values():
        path = Path(relative)
        names += [path.name, path.stem]
    names += ["removed_step", "answer_", "next_is_step"]
    url = make_url(db_url)
    places = [
        str(candidates),
        str(candidates.resolve()),
        str(tmp_path),
        tempfile.gettempdir(),
        socket.gethostname(),
    ]
    if url.database:
        places += [url.database, Path(url.database).name]
    host = url.query.get("host")
    if isinstance(host, str):
        places.append(host)
    places.append(url.render_as_string(hide_password=True))
    home = str(Path.home())
    if home not in ("/", ""):
        places.append(home)
    user = getpass.getuser()
    # A short user name ("root") could occur by chance inside compressed video; look for it in text only.
    return [n for n in dict.fromkeys(names + places) if len(n) >= 5 or n == user]


@pytest.fixture
def verified(db_url: str, tmp_path: Path) -> Iterator[tuple[Database, Path]]:
    candidates = _leaky_candidates(tmp_path / "build-machine" / "candidates")
    database = Database(db_url)
    try:
        ids = add_users(database, {"alice": ("annotator", []), "bob": ("annotator", [])})
        report = import_candidates(database, candidates)
        assert report.problems == [] and report.total_imported == 11
        with database.read() as db:
            items = [(i.id, i.version) for i in db.scalars(select(Item).order_by(Item.id))]
        with database.write() as db:
            for item_id, version in items:
                for name in ("alice", "bob"):
                    decision = DecisionInput("approve", "visible in the clip", version)
                    submit_decision(db, Actor(ids[name], name, "annotator"), item_id, decision)
        yield database, candidates
    finally:
        database.dispose()


def test_the_public_export_holds_no_original_name_local_path_or_database(
    verified: tuple[Database, Path], db_url: str, tmp_path: Path
) -> None:
    database, candidates = verified
    out = tmp_path / "release" / "expvid-verified"
    report = export_public(database, out)
    assert report.total == 11 and report.internal == out.parent / f"expvid-verified{INTERNAL_SUFFIX}"
    forbidden = _forbidden(candidates, db_url, tmp_path)
    assert any("removed_step_2" in f for f in forbidden) and str(candidates) in forbidden
    # The scan has something to find: the candidates' own files carry the names and paths inside.
    original = (candidates / LEAKY["verif"]).read_bytes()
    assert b"clip_1_removed_step_2.mp4" in original and str(candidates).encode() in original

    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert {p.relative_to(out).parts[0] for p in files} == {
        "annotations",
        "videos",
        "dataset.json",
        "release.json",
    }
    videos = [p for p in files if p.suffix == ".mp4"]
    assert len(videos) == len(LEAKY)  # one per original clip (all distinct), under a content name
    for path in files:
        relative = path.relative_to(out).as_posix()
        data = path.read_bytes()
        for needle in forbidden:
            assert needle not in relative, (relative, needle)
            assert needle.encode() not in data, (relative, needle)
        if path.suffix in (".json", ".jsonl"):
            text_ = data.decode()
            documents = (
                [json.loads(text_)] if path.suffix == ".json" else [json.loads(x) for x in text_.splitlines()]
            )
            for text in (t for document in documents for t in _strings(document)):
                assert not any(needle in text for needle in forbidden), (relative, text)
                assert not text.startswith("/"), (relative, text)  # no absolute path at all
    for video in videos:
        with av.open(str(video)) as container:
            assert set(container.metadata) <= ALLOWED_CONTAINER_TAGS, container.metadata
            for stream in container.streams:
                assert set(stream.metadata) <= ALLOWED_STREAM_TAGS, stream.metadata
                assert not any(any(f in v for f in forbidden) for v in stream.metadata.values())
            assert [s.type for s in container.streams] == ["video"]

    # The pictures are untouched: frame for frame the same coded frames as the clip the item named.
    records = [
        json.loads(line)
        for line in (out / "annotations/level2/video_verification.jsonl").read_text().splitlines()
    ]
    assert _frame_codes(out / records[0]["video_path"]) == _frame_codes(candidates / LEAKY["verif"])
    # `expvid eval` needs nothing else: the loader reads the public folder alone.
    dataset = load_expvid(out, strict=True)
    assert len(dataset.items) == 11
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["total_items"] == 11 and manifest["verification"]["settled_via"] == {"agreement": 11}

    # The internal folder keeps the trail, with reviewers under pseudonyms by default.
    internal = report.internal
    assert internal is not None and (internal / "README.txt").read_text().startswith(
        "This folder is the INTERNAL"
    )
    trail = {p["item"]: p for p in map(json.loads, (internal / "provenance.jsonl").read_text().splitlines())}
    verif = trail["video_verification/0"]
    assert (
        verif["original_video_path"] == LEAKY["verif"]
        and verif["public_video_path"] == records[0]["video_path"]
    )
    assert trail["materials/0"]["extra_record_fields"]["source_file"].endswith(
        "vitronectin_solution_answer_A.mp4"
    )
    annotators = {j["annotator"] for p in trail.values() for j in p["verification"]["judgements"]}
    assert annotators == {"annotator-1", "annotator-2"}
    assert "alice" not in (internal / "agreement.json").read_text()
    assert {p.name for p in internal.iterdir()} >= {
        "segments.jsonl",
        "experiments.jsonl",
        "papers",
        "verification.json",
    }


def test_reviewers_are_named_only_on_request_and_a_failed_export_leaves_nothing(
    verified: tuple[Database, Path], tmp_path: Path
) -> None:
    database, candidates = verified
    named = export_public(database, tmp_path / "a", with_reviewers=True, internal=tmp_path / "a-trail")
    assert named.internal is not None
    trail = [json.loads(line) for line in (named.internal / "provenance.jsonl").read_text().splitlines()]
    assert {j["annotator"] for p in trail for j in p["verification"]["judgements"]} == {"alice", "bob"}
    assert "alice" in (named.internal / "release-manifest.json").read_text()
    public_manifest = (tmp_path / "a" / "release.json").read_text()  # the public release names nobody
    assert "alice" not in public_manifest and "bob" not in public_manifest
    with pytest.raises(Exception, match="outside the public release"):
        export_public(database, tmp_path / "b", internal=tmp_path / "b" / "inside")
    (candidates / LEAKY["pred"]).write_bytes(b"not a video at all")
    with pytest.raises(Exception, match="cannot copy the video"):
        export_public(database, tmp_path / "c")
    left = {p.name for p in tmp_path.iterdir() if not p.name.startswith("platform.db")}
    assert left == {"build-machine", "a", "a-trail"}


def _frame_codes(path: Path) -> list[int]:
    with av.open(str(path)) as container:
        return [read_frame_code(frame.to_ndarray(format="rgb24")) for frame in container.decode(video=0)]
