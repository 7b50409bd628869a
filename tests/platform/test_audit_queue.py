"""A validity audit on the platform: `expvid audit` on the bundled sample with a planted shortcut,
then `expvid platform import` picks its audit.json up; the flagged items form the re-review queue,
their pages say why, and a verdict (recorded in the trail like any other) takes them out of it and
decides the export. Runs on SQLite and PostgreSQL (`db_url`)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from platform_browser import browser, no_page_errors, sign_in
from platform_env import FAST_PASSWORDS, Env, LiveServer, add_users, decide
from sqlalchemy import select
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.platform import PlatformSettings, create_app
from expvid.platform.db.engine import Database
from expvid.platform.db.models import AuditEvent, AuditFinding, Item
from expvid.platform.services.audit_queue import apply_audit, queue_counts, queued_item_ids
from expvid.platform.services.exporter import export_public

__all__ = ["browser", "no_page_errors"]  # fixtures used by this module

PLANTED_TASK = "materials"
#: Appended to every correct option of the task: the key becomes the longest option.
PLANT = " together with its calibrated holder, seal and printed label"
USERS = {"alice": ("annotator", []), "bob": ("annotator", []), "carol": ("adjudicator", []),
         "root": ("admin", [])}  # fmt: skip


def _plant_longest_option(root: Path) -> list[str]:
    path = root / "annotations" / "level1" / f"{PLANTED_TASK}.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in records:
        record["options"][record["answer"]] += PLANT
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    provenance = root / "provenance.jsonl"  # the sample states content hashes; the content changed
    lines = [json.loads(line) for line in provenance.read_text(encoding="utf-8").splitlines()]
    provenance.write_text(
        "".join(
            json.dumps({k: v for k, v in line.items() if k != "content_sha256"}) + "\n" for line in lines
        ),
        encoding="utf-8",
    )
    return [f"{PLANTED_TASK}/{record['id']}" for record in records]


@pytest.fixture(scope="session")
def audited_sample(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The bundled sample (the session's, copied) with the longest-option shortcut planted in one
    task, audited by `expvid audit` into the release folder (where a build's release gate writes its
    audit)."""
    root = tmp_path_factory.mktemp("audited") / "sample"
    shutil.copytree(sample_dir, root)
    planted = _plant_longest_option(root)
    result = CliRunner().invoke(
        app, ["audit", "--data", str(root), "--out", str(root), "--no-embeddings", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    return root, planted


@pytest.fixture
def campaign(db_url: str, audited_sample: tuple[Path, list[str]]) -> Iterator[Env]:
    root, _ = audited_sample
    database = Database(db_url)
    users = add_users(database, USERS)
    result = CliRunner().invoke(app, ["platform", "import", str(root), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "added to the re-review queue" in result.output
    settings = PlatformSettings(database_url=db_url, passwords=FAST_PASSWORDS)
    try:
        yield Env(url=db_url, database=database, settings=settings, candidates=root, users=users)
    finally:
        database.dispose()


def _queued_keys(env: Env) -> set[str]:
    with env.database.read() as db:
        ids = queued_item_ids(db)
        return set(db.scalars(select(Item.release_key).where(Item.id.in_(ids))))


def test_an_imported_audit_queues_the_planted_items_with_their_reasons(
    campaign: Env, audited_sample: tuple[Path, list[str]]
) -> None:
    root, planted = audited_sample
    audit = json.loads((root / "audit.json").read_text(encoding="utf-8"))
    longest = next(s for s in audit["solvers"] if s["name"] == "longest option" and s["task"] == PLANTED_TASK)
    assert longest["flagged"]
    queued = _queued_keys(campaign)
    assert set(planted) <= queued  # the planted shortcut picks every key of the task
    flagged_ids = {item["id"] for item in audit["items"] if item["flags"]}
    assert queued == flagged_ids  # nothing more: ExpVid's ids are the platform's <task>/<id>
    with campaign.database.read() as db:
        item = db.scalar(select(Item).where(Item.release_key == planted[0]))
        assert item is not None
        finding = db.scalar(select(AuditFinding).where(AuditFinding.item_id == item.id))
        assert finding is not None and "longest option" in finding.flags
        detail = next(d for d in finding.details if d["flag"] == "longest option")
        assert (
            detail["accuracy"] == pytest.approx(longest["accuracy"]) and detail["chance"] == longest["chance"]
        )
        assert "picks the correct option" in detail["reason"]
        counts = queue_counts(db)
    assert counts.in_queue == len(flagged_ids) and counts.by_flag["longest option"] >= len(planted)

    status = CliRunner().invoke(app, ["platform", "status", "--db", campaign.url])
    assert (
        f"re-review queue: {len(flagged_ids)} item(s) to decide, of {len(flagged_ids)} item(s) flagged by 1"
        in (" ".join(status.output.split()))
    )
    again = CliRunner().invoke(app, ["platform", "audit", str(root / "audit.json"), "--db", campaign.url])
    assert again.exit_code == 0 and "applied before; nothing changed" in again.output
    assert _queued_keys(campaign) == queued
    with campaign.database.read() as db:
        assert len(list(db.scalars(select(AuditFinding)))) == len(flagged_ids)


def test_ids_that_match_no_item_are_named_and_exit_2_when_none_match(
    campaign: Env, audited_sample: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, _ = audited_sample
    audit = json.loads((root / "audit.json").read_text(encoding="utf-8"))
    stranger = {
        "id": f"{PLANTED_TASK}/9999",
        "task": PLANTED_TASK,
        "flags": ["longest option"],
        "reasons": {},
    }
    partly = tmp_path / "partly.json"
    partly.write_text(json.dumps({**audit, "items": [*audit["items"], stranger]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["platform", "audit", str(partly), "--db", campaign.url])
    assert result.exit_code == 0, result.output
    assert f"1 audit id(s) match no item: {PLANTED_TASK}/9999" in " ".join(result.output.split())
    none = tmp_path / "none.json"
    none.write_text(json.dumps({**audit, "items": [stranger]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["platform", "audit", str(none), "--db", campaign.url])
    assert result.exit_code == 2 and "match no item" in result.output
    bad = CliRunner().invoke(app, ["platform", "audit", str(tmp_path / "missing.json"), "--db", campaign.url])
    assert bad.exit_code == 2 and "missing.json" in bad.output


def test_a_verdict_takes_an_item_out_of_the_queue_is_in_the_trail_and_decides_the_export(
    campaign: Env, audited_sample: tuple[Path, list[str]], tmp_path: Path
) -> None:
    root, planted = audited_sample
    kept, dropped = planted[0], planted[1]
    for user in ("alice", "bob"):
        decide(campaign, user, kept, "approve")
        decide(campaign, user, dropped, "reject")
    assert campaign.item(kept).state == "verified" and campaign.item(dropped).state == "rejected"
    assert not {kept, dropped} & _queued_keys(campaign)
    with campaign.database.read() as db:
        actions = [
            e.action
            for e in db.scalars(select(AuditEvent).where(AuditEvent.item_id == campaign.item_id(dropped)))
        ]
    assert (
        actions.index("item.audit_flagged")
        < actions.index("decision.created")
        < actions.index("item.rejected")
    )

    export_public(campaign.database, tmp_path / "release")
    released = {
        f"{path.stem}/{json.loads(line)['id']}"
        for path in (tmp_path / "release" / "annotations").rglob("*.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }
    assert kept in released and dropped not in released

    # A later audit (another file) that flags the verified item sends it back to its annotators.
    audit = json.loads((root / "audit.json").read_text(encoding="utf-8"))
    later = tmp_path / "later.json"
    later.write_text(
        json.dumps({**audit, "items": [i for i in audit["items"] if i["id"] == kept]}), encoding="utf-8"
    )
    applied = apply_audit(campaign.database, later, root=root)
    assert applied.findings_added == 1 and applied.reopened == 1
    assert campaign.item(kept).state == "in_review" and kept in _queued_keys(campaign)


def test_reviewers_see_the_queue_and_why_in_chromium(campaign: Env, backend: str, browser: object) -> None:
    if backend != "sqlite":
        pytest.skip("the pages are the same on both backends; the queue itself is tested on both above")
    with LiveServer(create_app(campaign.settings, database=campaign.database)) as server:
        alice = sign_in(browser, server, "alice")
        alice.click("nav a[href='/rereview']")  # type: ignore[attr-defined]
        rows = alice.locator("[data-testid=rereview] tbody tr[data-item]")  # type: ignore[attr-defined]
        before = rows.count()
        assert before > 0 and "longest option" in rows.first.inner_text()
        rows.first.locator("a").click()
        reasons = alice.locator("[data-testid=audit-findings]")  # type: ignore[attr-defined]
        text = " ".join(reasons.inner_text().split())
        assert "longest option" in text and "picks the correct option" in text
        assert "against chance" in text and "95% CI" in text  # the solver's accuracy vs chance, with n
        assert PLANT.strip() in alice.locator("[data-testid=audit-picked]").first.inner_text()  # type: ignore[attr-defined]
        alice.check("input[name=verdict][value=approve]")  # type: ignore[attr-defined]
        alice.fill("#justification", "the holder and label are visible on the bench")  # type: ignore[attr-defined]
        alice.click("[data-testid=save]")  # type: ignore[attr-defined]
        alice.goto("/rereview")  # type: ignore[attr-defined]
        assert alice.locator("[data-testid=rereview] tbody tr[data-item]").count() == before - 1  # type: ignore[attr-defined]

        root = sign_in(browser, server, "root")  # an admin sees every queued item, hers included
        root.goto("/rereview")  # type: ignore[attr-defined]
        with campaign.database.read() as db:
            queued = len(queued_item_ids(db))
        assert root.locator("[data-testid=rereview] tbody tr[data-item]").count() == queued  # type: ignore[attr-defined]
