"""`expvid platform export --format hf`: a verified benchmark as a Hub dataset repository, loadable back."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from sqlalchemy import select
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.export.lmms_eval_runtime import doc_to_text
from expvid.hub.dataset_repo import make_hub_repo
from expvid.platform import open_database
from expvid.platform.config import PasswordPolicy
from expvid.platform.db.models import Item
from expvid.platform.security.passwords import Passwords
from expvid.platform.services.errors import SYSTEM, Actor
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.review import DecisionInput, submit_decision
from expvid.platform.services.users import add_user
from expvid.schema import DataError
from expvid.suites.expvid_suite import load_expvid

datasets = pytest.importorskip("datasets")
runner = CliRunner()
REVIEWERS = ("alice", "bob")


def _card(root: Path) -> tuple[dict, str]:  # type: ignore[type-arg]
    text = (root / "README.md").read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    return yaml.safe_load(header), body


def _verified_platform(sample_dir: Path, tmp_path: Path) -> str:
    """A SQLite platform with the sample imported and some items settled by two reviewers."""
    url = f"sqlite:///{tmp_path / 'platform.db'}"
    database = open_database(url)
    try:
        ids = {}
        with database.write() as db:
            for name in REVIEWERS:
                user = add_user(
                    db, Passwords(PasswordPolicy(time_cost=1, memory_kib=8, parallelism=1)), username=name,
                    password=f"pw-{name}-secret", role="annotator", disciplines=[], actor=SYSTEM,
                )  # fmt: skip
                ids[name] = user.id
        import_candidates(database, sample_dir)
        with database.read() as db:
            items = {i.release_key: (i.id, i.version) for i in db.scalars(select(Item))}
        plan = {
            "tools/0": "approve",
            "tools/1": "approve",
            "step_prediction/0": "approve",
            "step_prediction/1": "approve",
        }
        plan |= {"scientific_discovery/0": "approve", "materials/2": "approve"}
        for key, verdict in plan.items():
            for name in REVIEWERS:
                item_id, version = items[key]
                actor = Actor(id=ids[name], name=name, role="annotator", disciplines=())
                data = DecisionInput(
                    verdict=verdict, justification=f"{name} checked {key}", item_version=version
                )
                with database.write() as db:
                    submit_decision(db, actor, item_id, data)
        with database.write() as db:  # one disagreement: not exported, but it counts in the agreement
            submit_decision(db, Actor(id=ids["alice"], name="alice", role="annotator", disciplines=()),
                            items["tools/2"][0], DecisionInput("approve", "looks right", items["tools/2"][1]))  # fmt: skip
            submit_decision(db, Actor(id=ids["bob"], name="bob", role="annotator", disciplines=()),
                            items["tools/2"][0], DecisionInput("reject", "wrong tool shown", items["tools/2"][1]))  # fmt: skip
    finally:
        database.dispose()
    return url


def test_platform_export_hf_is_a_loadable_hub_repository(sample_dir, tmp_path):
    url = _verified_platform(sample_dir, tmp_path)
    out = tmp_path / "bench"
    result = runner.invoke(
        app, ["platform", "export", str(out), "--db", url, "--format", "hf", "--repo-id", "lab/bench"]
    )
    assert result.exit_code == 0, result.output
    assert "hf upload lab/bench" in result.output and "--repo-type dataset" in result.output

    meta, body = _card(out)
    configs = {c["config_name"]: c["data_files"][0] for c in meta["configs"]}
    assert configs["level1_tools"] == {"split": "test", "path": "annotations/level1/tools.jsonl"}
    assert meta["license"] == "cc-by-nc-4.0" and meta["task_categories"] == ["video-text-to-text"]
    assert "| tools | 1 |" in body and "| **all** |" in body
    assert set(configs) == {
        "level1_tools",
        "level1_materials",
        "level2_step_prediction",
        "level3_scientific_discovery",
    }
    assert (
        "No verified item yet (empty files, no config): quantity" in body
    )  # empty: `datasets` cannot load it
    assert "settled: 6 by agreement" in body and "2 reviewer(s)" in body  # from the internal provenance ...
    assert not any(name in body for name in REVIEWERS)  # ... reduced to numbers: no reviewer is named
    assert "Cohen's kappa" in body and (out / ".gitattributes").read_text().startswith("*.mp4 filter=lfs")

    # back into expvid, as a release ...
    local = load_expvid(out)
    assert len(local) == 6 and not local.problems
    run = runner.invoke(app, ["eval", "--data", str(out), "--model", "first-option", "--out", str(tmp_path / "run"),
                              "--cache-dir", str(tmp_path / "cache"), "--quiet"])  # fmt: skip
    assert run.exit_code == 0, run.output
    scores = json.loads((tmp_path / "run" / "scores.json").read_text())
    assert scores["tasks"]["tools"]["n"] == 2 and scores["tasks"]["step_prediction"]["n"] == 2

    # ... and into `datasets`, by config through the card, and by annotation file
    datasets.disable_progress_bars()
    for name, files in configs.items():
        rows = datasets.load_dataset(str(out), name, split="test", cache_dir=str(tmp_path / "hf"))
        task = Path(files["path"]).stem
        assert len(rows) == sum(1 for item in local if item.task == task), name
        assert "Json" not in repr(rows.features), (name, rows.features)  # typed, no JSON fallback
    steps = datasets.load_dataset("json", data_files=str(out / "annotations/level2/step_prediction.jsonl"),
                                  split="train", cache_dir=str(tmp_path / "hf"))  # fmt: skip
    assert steps.features["answer"].dtype == "int64"
    assert [r["question"] for r in steps] == [i.question for i in local if i.task == "step_prediction"]


def test_mixed_answer_types_are_made_uniform_and_the_items_are_unchanged(sample_dir, tmp_path):
    root = tmp_path / "bench"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", root / "videos")
    raw = [
        json.loads(line)
        for line in (root / "annotations/level2/step_prediction.jsonl").read_text().splitlines()
    ]
    assert {type(r["answer"]) for r in raw} == {int, str}  # the release's own mix
    before = load_expvid(root)
    report = make_hub_repo(root, pretty_name="Sample", license_id="cc-by-4.0")
    after = load_expvid(root)
    assert [(i.id, i.question, i.answer, i.options) for i in after] == [
        (i.id, i.question, i.answer, i.options) for i in before
    ]
    rewritten = [
        json.loads(line)
        for line in (root / "annotations/level2/step_prediction.jsonl").read_text().splitlines()
    ]
    assert {type(r["answer"]) for r in rewritten} == {int}
    assert report.items == len(before) and len(report.configs) == 10
    meta, body = _card(root)
    assert meta["pretty_name"] == "Sample" and "no provenance records were found" in body


def test_a_benchmark_with_a_missing_video_is_refused(sample_dir, tmp_path):
    root = tmp_path / "bench"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", root / "videos")
    gone = next((root / "videos/level_3").glob("*.mp4"))
    gone.unlink()
    with pytest.raises(DataError, match=rf"1 video file\(s\) not found:\n  .*{gone.name}"):
        make_hub_repo(root)
    assert not (root / "README.md").exists()


def test_every_column_loads_typed_in_datasets_through_the_card(sample_dir, tmp_path):
    """Completeness verification maps 3 to 10 letters: inferred, `datasets` reads `options` as JSON."""
    root = tmp_path / "bench"
    shutil.copytree(sample_dir / "annotations", root / "annotations")
    shutil.copytree(sample_dir / "videos", root / "videos")
    make_hub_repo(root)
    items = [item for item in load_expvid(root) if item.task == "video_verification"]
    assert len({len(item.options or {}) for item in items}) > 1  # the condition: option counts differ
    datasets.disable_progress_bars()
    meta, _ = _card(root)
    for config in meta["configs"]:
        rows = datasets.load_dataset(
            str(root), config["config_name"], split="test", cache_dir=str(tmp_path / "hf")
        )
        assert "Json" not in repr(rows.features), (config["config_name"], rows.features)
    rows = datasets.load_dataset(
        str(root), "level2_video_verification", split="test", cache_dir=str(tmp_path / "hf")
    )
    options = rows.features["options"]
    letters = sorted({letter for item in items for letter in item.options or {}})
    assert isinstance(options, dict) and sorted(options) == letters
    assert all(feature == datasets.Value("string") for feature in options.values())
    # An item with fewer letters has them null; the lmms-eval hooks read the item's own options.
    assert [{k: v for k, v in row["options"].items() if v is not None} for row in rows] == [
        item.options for item in items
    ]
    from expvid.suites.registry import get_suite

    suite = get_suite("expvid")
    assert [doc_to_text("video_verification", row, root, None) for row in rows] == [
        suite.prompt_text(item) for item in items
    ]
