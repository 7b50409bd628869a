"""Export: only verified items, in the release layout, loadable by the ExpVid loader used by eval."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from platform_env import EDITED_TOOLS, Env, add_users, decide
from sqlalchemy import select, update

from expvid.platform.db.engine import Database
from expvid.platform.db.models import ImportBatch, Item, Segment
from expvid.platform.services.errors import Actor
from expvid.platform.services.exporter import ExportError, export_verified
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.level2 import StepRow, rows_from_steps
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.platform.services.settlement import segment_steps
from expvid.suites.expvid_suite import load_expvid


def _jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _settle(env: Env) -> None:
    decide(env, "alice", "materials/0", "approve")
    decide(env, "bob", "materials/0", "approve")
    decide(env, "alice", "tools/0", "edit", content=EDITED_TOOLS)
    decide(env, "bob", "tools/0", "edit", content=EDITED_TOOLS)
    decide(env, "alice", "tools/1", "reject")
    decide(env, "bob", "tools/1", "reject")
    decide(env, "alice", "experimental_conclusion/0", "approve")
    decide(env, "bob", "experimental_conclusion/0", "reject")  # conflict: not exported
    with env.database.read() as db:
        segment = db.scalar(select(Segment).where(Segment.segment_key == "E1/seg_1"))
        assert segment is not None
        rows = rows_from_steps(segment_steps(segment))
    rows[1] = StepRow(4, "Rinse the well twice with 1 mL PBS", 2.0, 3.0)
    decide(env, "alice", "sequence_generation/0", "edit", rows=rows)
    decide(env, "bob", "sequence_generation/0", "edit", rows=rows)


def test_export_writes_only_verified_items_in_the_release_layout(env: Env, tmp_path: Path) -> None:
    _settle(env)
    out = tmp_path / "verified"
    report = export_verified(env.database, out)
    assert dict(report.items) == {"materials": 1, "tools": 1, "sequence_generation": 1}
    assert sorted(p.name for p in out.iterdir()) == ["annotations", "dataset.json", "release.json", "videos"]

    tools = _jsonl(out / "annotations" / "level1" / "tools.jsonl")
    assert len(tools) == 1 and tools[0]["id"] == 0 and tools[0]["options"] == EDITED_TOOLS.options
    assert list(tools[0]) == ["id", "video_path", "question", "options", "answer", "asr_caption", "video_id",
                              "category"]  # fmt: skip
    generation = _jsonl(out / "annotations" / "level2" / "sequence_generation.jsonl")
    assert (
        generation[0]["answer"] == ["3", "4", "5"]
        and "4. Rinse the well twice with 1 mL PBS" in generation[0]["question"]
    )
    assert (
        _jsonl(out / "annotations" / "level3" / "experimental_conclusion.jsonl") == []
    )  # present task, nothing verified
    for records in (tools, generation):
        for record in records:
            name = Path(record["video_path"]).name
            assert (
                name.startswith("clip_") and "removed" not in name and (out / record["video_path"]).is_file()
            )
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["total_items"] == 3 and manifest["verification"]["settled_via"] == {"agreement": 3}
    assert manifest["verification"]["agreement"]["by_task"]["tools"]["percent_agreement"] == 100.0

    internal = report.internal
    assert internal is not None and internal.name == "verified-INTERNAL-do-not-publish"
    provenance = {p["item"]: p for p in _jsonl(internal / "provenance.jsonl")}
    assert set(provenance) == {"materials/0", "tools/0", "sequence_generation/0"}
    trail = provenance["tools/0"]["verification"]
    assert trail["settled_via"] == "agreement" and trail["edited"] is True
    assert sorted(j["annotator"] for j in trail["judgements"]) == ["annotator-1", "annotator-2"]  # pseudonyms
    assert provenance["tools/0"]["original_video_path"] == "videos/level_1/E1/clip_t.mp4"
    assert provenance["tools/0"]["public_video_path"] == tools[0]["video_path"]
    assert provenance["materials/0"]["flags"][0]["kind"] == "blind_answerable"
    segments = _jsonl(internal / "segments.jsonl")
    assert (
        segments[0]["segment_id"] == "E1/seg_1"
        and segments[0]["steps"][1]["text"] == "Rinse the well twice with 1 mL PBS"
    )
    assert segments[0]["original_steps"][1]["text"] == "Rinse the well twice with PBS"
    assert (internal / "papers" / "E1.md").is_file()
    agreement = json.loads((internal / "agreement.json").read_text())
    assert (
        agreement["by_task"]["tools"]["n"] == 2
        and agreement["by_task"]["tools"]["percent_agreement"] == 100.0
    )
    assert agreement["by_task"]["experimental_conclusion"]["percent_agreement"] == 0.0
    assert {tuple(p["annotators"]) for p in agreement["by_pair"]} == {("annotator-1", "annotator-2")}
    verification = json.loads((internal / "verification.json").read_text())
    assert verification["total_items"] == 3 and verification["platform_states"]["conflict"] == 1

    dataset = load_expvid(out, strict=True)
    assert dataset.problems == []
    loaded = {item.id: item for item in dataset.items}
    assert set(loaded) == {"materials/0", "tools/0", "sequence_generation/0"}
    assert loaded["tools/0"].options == EDITED_TOOLS.options and loaded["sequence_generation/0"].answer == [
        3,
        4,
        5,
    ]


def test_the_team_layout_keeps_every_sidecar_in_one_directory(env: Env, tmp_path: Path) -> None:
    """`--no-public`: the older single-directory layout, for moving work between platform instances."""
    _settle(env)
    out = tmp_path / "team"
    report = export_verified(env.database, out, public=False, with_reviewers=True)
    assert report.internal is None and not (tmp_path / "team-INTERNAL-do-not-publish").exists()
    names = {p.name for p in out.iterdir()}
    assert {
        "annotations",
        "videos",
        "provenance.jsonl",
        "segments.jsonl",
        "papers",
        "agreement.json",
    } <= names
    provenance = {p["item"]: p for p in _jsonl(out / "provenance.jsonl")}
    assert sorted(j["annotator"] for j in provenance["tools/0"]["verification"]["judgements"]) == [
        "alice",
        "bob",
    ]
    segment = _jsonl(out / "segments.jsonl")[0]
    assert segment["clip"] is not None and (out / segment["clip"]).is_file()
    assert load_expvid(out, strict=True).problems == []


def test_export_refuses_a_non_empty_directory_and_leaves_nothing_half_written(
    env: Env, tmp_path: Path
) -> None:
    _settle(env)
    exports = tmp_path / "exports"
    out = exports / "taken"
    out.mkdir(parents=True)
    (out / "keep.txt").write_text("mine")
    with pytest.raises(ExportError, match="not empty"):
        export_verified(env.database, out)
    assert (out / "keep.txt").read_text() == "mine"
    trail = exports / "fresh-INTERNAL-do-not-publish"
    trail.mkdir()
    (trail / "old.txt").write_text("an earlier export's provenance")
    with pytest.raises(ExportError, match="not empty"):
        export_verified(env.database, exports / "fresh")  # the internal folder is checked too
    trail.joinpath("old.txt").unlink()
    trail.rmdir()

    # Media that went missing after import: the export fails and leaves no partial directory behind.
    moved = tmp_path / "moved"
    shutil.copytree(env.candidates, moved)
    (moved / "videos" / "level_1" / "E1" / "clip_t.mp4").unlink()
    with env.database.write() as db:
        db.execute(update(ImportBatch).values(root=str(moved)))
    with pytest.raises(ExportError, match=r"clip_t\.mp4 is missing"):
        export_verified(env.database, exports / "fresh")
    assert sorted(p.name for p in exports.iterdir()) == ["taken"]


def test_the_sample_release_round_trips_through_review(db_url: str, sample_dir: Path, tmp_path: Path) -> None:
    """The bundled sample (the release's exact shapes and quirks, with its sidecars) imports without a
    problem, and items approved by both annotators come out identical in content and loadable by eval."""
    originals: dict[str, dict] = {}  # type: ignore[type-arg]
    for path in sorted((sample_dir / "annotations").rglob("*.jsonl")):
        for record in _jsonl(path):
            originals[f"{path.stem}/{record['id']}"] = record
    database = Database(db_url)
    try:
        ids = add_users(database, {"ann1": ("annotator", []), "ann2": ("annotator", [])})
        report = import_candidates(database, sample_dir)
        assert report.problems == [] and report.warnings == [] and report.total_imported == len(originals)
        assert report.segments > 0 and report.experiments == 6
        with database.read() as db:
            items = [(i.id, i.key, i.version) for i in db.scalars(select(Item).order_by(Item.id))]
        with database.write() as db:
            for item_id, _, version in items:
                for name in ("ann1", "ann2"):
                    actor = Actor(ids[name], name, "annotator")
                    submit_decision(
                        db, actor, item_id, DecisionInput("approve", "visible in the clip", version)
                    )
        out = tmp_path / "export"
        assert export_verified(database, out).total == len(originals)
    finally:
        database.dispose()
    dataset = load_expvid(out, strict=True)
    assert len(dataset.items) == len(originals)
    for path in (out / "annotations").rglob("*.jsonl"):
        for record in _jsonl(path):
            original = originals[f"{path.stem}/{record['id']}"]
            for field in ("id", "question", "options", "answer", "asr_caption", "video_id", "category"):
                assert record.get(field) == original.get(field), (path.stem, record["id"], field)
            assert "removed_step" not in record["video_path"]
