"""The audit a SciVideoBench build writes (its release gate) reaches the platform: the suite names
items `<video>/<question>/<type>`, the platform `<type>/<video>/<question>`; every id matches, and a
flagged item's review page (with the SciVideoBench evidence) says why. SQLite only."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from svb_helpers import SvbBuild
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "platform"))

from platform_env import FAST_PASSWORDS, add_users, password_of
from platform_http import Browserless
from sqlalchemy import select

from expvid.cli.main import app
from expvid.platform import PlatformSettings, create_app
from expvid.platform.db.engine import Database
from expvid.platform.db.migrate import upgrade_to_head
from expvid.platform.db.models import Item
from expvid.platform.services.audit_queue import queued_item_ids
from expvid.platform.testing import LiveServer

USERS = {"alice": ("annotator", []), "bob": ("annotator", [])}


def test_the_build_audit_matches_every_item_and_shows_on_the_page(
    svb_build: SvbBuild, tmp_path: Path
) -> None:
    root = tmp_path / "candidates"
    shutil.copytree(svb_build.out, root)
    audit = json.loads((root / "audit.json").read_text(encoding="utf-8"))
    first = audit["items"][0]
    assert first["id"].endswith("/" + first["task"])
    first["flags"] = ["near-duplicate options"]  # planted: the sample build has no twins
    first["reasons"] = {"near-duplicate options": "B and D are one answer written twice (planted)"}
    (root / "audit.json").write_text(json.dumps(audit), encoding="utf-8")

    url = f"sqlite:///{tmp_path / 'review.db'}"
    upgrade_to_head(url)
    database = Database(url)
    add_users(database, USERS)
    imported = CliRunner().invoke(app, ["platform", "import", str(root), "--db", url, "--json"])
    applied = json.loads(imported.stdout)["audit"]
    assert applied["unmatched"] == [] and applied["audit_items"] == len(audit["items"]), applied
    with database.read() as db:
        item = db.scalar(select(Item).where(Item.id.in_(queued_item_ids(db))))
    assert item is not None and item.release_key == f"{first['task']}/{first['id'].rsplit('/', 1)[0]}"
    settings = PlatformSettings(database_url=url, passwords=FAST_PASSWORDS)
    with LiveServer(create_app(settings, database=database)) as live:
        page = Browserless(live.url, "alice", password_of("alice")).client.get(f"/items/{item.id}").text
        assert 'data-testid="audit-findings"' in page and "written twice (planted)" in page
        assert "a second correct option" in page  # what the check means
    database.dispose()
