"""The expert verification platform (ExpVid appendix E; the recipes' double-annotation protocols).

A FastAPI web app over SQLAlchemy (SQLite by default, PostgreSQL for teams): accounts and roles,
double annotation with blind review, adjudication with hidden and shuffled sources, an append-only
audit trail, agreement figures, import of candidate directories and export of verified benchmarks.

Entry points:
- `create_app(settings)` -> FastAPI app (database migrated with `upgrade_to_head(url)` first);
- `import_candidates(database, DIR)` (`services.importer`);
- `export_public(database, DIR)` (`services.exporter`): the public release of the verified items
  (annotations + renamed, metadata-free videos + dataset.json) and, in a separate folder, the internal
  provenance; other exporters (e.g. a Hugging Face layout) start from its output;
- the `expvid platform ...` commands (`expvid.cli.platform.platform_app`).
Heavy imports happen on first use, so `import expvid.platform` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from expvid.platform.config import PlatformSettings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from expvid.platform.db.engine import Database

__all__ = ["PlatformSettings", "create_app", "open_database"]


def create_app(settings: PlatformSettings, *, database: Database | None = None) -> FastAPI:
    from expvid.platform.web.app import create_app as _create_app

    return _create_app(settings, database=database)


def open_database(url: str, *, migrate: bool = True, **kwargs: Any) -> Database:
    """A `Database` for `url`, brought to the newest schema first unless `migrate=False`."""
    from expvid.platform.db.engine import Database
    from expvid.platform.db.migrate import upgrade_to_head

    if migrate:
        upgrade_to_head(url)
    return Database(url, **kwargs)
