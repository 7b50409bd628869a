"""Every export is a numbered, immutable release with a manifest; `platform diff` says what changed
between two; `platform status` says which items each figure covers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from platform_batches import drop, next_batch, records, redraft
from platform_env import Env, decide
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from expvid.cli.platform import platform_app
from expvid.platform.services.exporter import export_verified
from expvid.platform.services.importer import import_candidates
from expvid.platform.services.releases import sha256_of

runner = CliRunner()
TOOL0, TOOL1, MATERIAL, CONCLUSION = (
    "tools/E1-tool0", "tools/E1-tool1", "materials/E1-mate0", "experimental_conclusion/E1-expe0",
)  # fmt: skip


def _verify(env: Env, *keys: str) -> None:
    for key in keys:
        for user in ("alice", "bob"):
            decide(env, user, key, "approve")
        assert env.item(key).state == "verified", key


def test_releases_are_numbered_immutable_and_compared(uid_campaign: Env, tmp_path: Path) -> None:
    env = uid_campaign
    _verify(env, TOOL0, TOOL1, MATERIAL)
    one = export_verified(env.database, tmp_path / "release1")
    assert one.release == 1
    public = json.loads((tmp_path / "release1" / "release.json").read_text())
    assert public["release"] == 1 and public["item_count"] == 3 and public["previous_release"] is None
    entry = next(e for e in public["items"] if e["id"] == TOOL0)
    assert "key" not in entry and entry["annotators"] == ["annotator-1", "annotator-2"]
    released = next(
        json.loads(line)
        for line in (tmp_path / "release1" / "annotations" / "level1" / "tools.jsonl")
        .read_text()
        .splitlines()
        if json.loads(line)["id"] == TOOL0.split("/")[1]
    )
    assert entry["content_sha256"] == sha256_of(released)  # anyone can check a copy against it
    assert "2 items of this release" not in public["agreement"]["released_items"]["covers"]
    assert public["agreement"]["released_items"]["covers"].startswith("3 items of this release")
    internal = json.loads(
        (tmp_path / "release1-INTERNAL-do-not-publish" / "release-manifest.json").read_text()
    )
    assert {e["key"] for e in internal["items"]} == {TOOL0, TOOL1, MATERIAL}

    # The next batch: one item re-drafted with another answer, one dropped; one more item verified.
    second = next_batch(env.candidates, tmp_path / "batch2")
    old_answer = records(second)[TOOL1]["answer"]
    new_answer = next(letter for letter in "ABCD" if letter != old_answer)
    redraft(second, TOOL1, answer=new_answer)
    drop(second, MATERIAL)
    import_candidates(env.database, second)
    _verify(env, TOOL1, CONCLUSION)
    two = export_verified(env.database, tmp_path / "release2")
    assert two.release == 2

    code = runner.invoke(platform_app, ["diff", "1", "2", "--db", env.url, "--json"])
    assert code.exit_code == 0, code.output
    changes = json.loads(code.output)
    assert changes["added"] == [CONCLUSION] and changes["removed"] == [MATERIAL]
    assert changes["changed"] == [{"id": TOOL1, "fields": ["answer"]}]
    assert changes["answers_changed"] == [{"id": TOOL1, "from": old_answer, "to": new_answer}]
    assert changes["counts"]["unchanged"] == 1
    # The same from the folders (the public manifests, matched by release id), in words.
    plain = runner.invoke(
        platform_app, ["diff", str(tmp_path / "release1"), str(tmp_path / "release2"), "--db", env.url]
    )
    assert plain.exit_code == 0, plain.output
    assert "1 added, 1 removed, 1 changed (1 answer(s) changed)" in plain.output
    assert f'answer: {TOOL1}: "{old_answer}" -> "{new_answer}"' in plain.output
    listed = runner.invoke(platform_app, ["releases", "--db", env.url])
    assert "release 1" in listed.output and "release 2" in listed.output
    assert runner.invoke(platform_app, ["diff", "1", "9", "--db", env.url]).exit_code == 1

    # Immutable: the database refuses to rewrite or delete a release.
    for statement in ("UPDATE releases SET item_count = 0", "DELETE FROM releases"):
        with pytest.raises(DBAPIError, match="immutable"), env.database.write() as db:
            db.execute(text(statement))

    # `status` says which items each figure covers.
    status = runner.invoke(platform_app, ["status", "--db", env.url], env={"COLUMNS": "40"})
    assert status.exit_code == 0, status.output
    flat = " ".join(status.output.split())
    assert "latest release: 2 (3 item(s)" in flat
    assert "not counted: 1 removed upstream" in flat  # the dropped item's two approvals
    assert "Agreement over 3 items of the latest release with all their current judgements" in flat
