"""A validity audit of a ProMQA-style release reaches its procedural items: `expvid audit --suite
promqa` names items by their question id alone, the platform keys them `<type>/<question id>`; the
flagged item's own review page (ProMQA's Figure 11 page) says why. SQLite only: the queue's storage
is tested on both backends in test_audit_queue.py."""

from __future__ import annotations

import json
from pathlib import Path

from platform_env import FAST_PASSWORDS, add_users, password_of
from platform_http import Browserless
from sqlalchemy import select
from typer.testing import CliRunner

from expvid.cli.main import app
from expvid.platform import PlatformSettings, create_app
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.db.models import Assignment, Item
from expvid.platform.services.audit_queue import queued_item_ids
from expvid.platform.testing import LiveServer

USERS = {"alice": ("annotator", []), "bob": ("annotator", [])}
REASON = "every model misses it, agreeing on option B (a planted finding)"


def test_a_procedural_item_flagged_by_an_audit_shows_why(tmp_path: Path) -> None:
    root = tmp_path / "promqa"
    runner = CliRunner()
    assert runner.invoke(app, ["sample", "make", str(root), "--suite", "promqa"]).exit_code == 0
    audited = runner.invoke(app, ["audit", "--data", str(root), "--suite", "promqa", "--out", str(root),
                                  "--no-embeddings", "--quiet"])  # fmt: skip
    assert audited.exit_code == 0, audited.output
    audit = json.loads((root / "audit.json").read_text(encoding="utf-8"))
    first = audit["items"][0]
    assert "/" not in first["id"]  # the suite's own id: the question id, no task in it
    first["flags"], first["reasons"] = ["candidate wrong key"], {"candidate wrong key": REASON}
    (root / "audit.json").write_text(json.dumps(audit), encoding="utf-8")

    url = f"sqlite:///{tmp_path / 'review.db'}"
    upgrade_to_head(url)
    database = Database(url)
    users = add_users(database, USERS)
    imported = runner.invoke(app, ["platform", "import", str(root), "--db", url, "--json"])
    report = json.loads(imported.stdout)
    assert report["audit"]["unmatched"] == [] and report["audit"]["findings_added"] == 1, report["audit"]
    with database.read() as db:
        queued = queued_item_ids(db)
        item = db.scalar(select(Item).where(Item.id.in_(queued)))
        assert item is not None and item.release_key == f"{first['task']}/{first['id']}" and item.level == 0
        holder = db.scalar(select(Assignment.user_id).where(Assignment.item_id == item.id).limit(1))
    name = next(n for n, i in users.items() if i == holder)
    settings = PlatformSettings(database_url=url, passwords=FAST_PASSWORDS)
    with LiveServer(create_app(settings, database=database)) as live:
        reviewer = Browserless(live.url, name, password_of(name))
        page = reviewer.client.get(f"/items/{item.id}").text
        assert 'data-testid="audit-findings"' in page and "candidate wrong key" in page and REASON in page
        assert "every model misses it, agreeing on the same other option" in page  # what the check means
        listed = reviewer.client.get("/rereview").text
        assert f'data-item="{item.id}"' in listed
        assert reviewer.client.get("/api/rereview").json()["items"][0]["flags"] == ["candidate wrong key"]
        detail = reviewer.client.get(f"/api/items/{item.id}").json()["audit_findings"][0]
        assert detail["open"] and detail["flags"][0]["reason"] == REASON
    database.dispose()
