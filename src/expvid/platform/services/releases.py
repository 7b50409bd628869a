"""Numbered, immutable releases and what changed between two of them.

Every `expvid platform export` is a release: the next number, a manifest kept in the database
(`releases`, append-only like the audit trail: triggers refuse UPDATE and DELETE) and written beside
the release (`release.json`, public: release ids and content hashes; the internal folder's
`release-manifest.json` adds each item's stable identity). The manifest lists every item with the
SHA-256 of its released record (question, options, answer, narration, the video by its content
name) and of each field, its answer, who reviewed it (pseudonyms unless `--with-reviewers`), how
it was settled, and the agreement over the released items and over the whole campaign, each figure
naming its population. A dataset user can check a copy against it; a team can say exactly what
release 3 changed (`expvid platform diff 2 3`): items added, removed, changed (which fields), and
changed answers. Argilla keeps dataset versions the same way; Label Studio users ask for them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from expvid.platform.db import audit_chain
from expvid.platform.db.models import Item, Release, utc_now
from expvid.platform.services.errors import Actor, NotFound

MANIFEST_FORMAT = "expvid-release-manifest/1"
PUBLIC_MANIFEST = "release.json"
INTERNAL_MANIFEST = "release-manifest.json"
#: Fields whose changes a diff names.
FIELDS = ("question", "options", "answer", "asr_caption", "video_path", "video_id", "category")


def sha256_of(value: Any) -> str:
    """SHA-256 of a JSON value in canonical form (db/audit_chain.py: the same on any machine)."""
    return hashlib.sha256(audit_chain.canonical(value).encode("utf-8")).hexdigest()


def item_entry(
    *, key: str, record: dict[str, Any], task: str, annotators: list[str | None], adjudicator: str | None,
    settled_via: str | None, edited: bool, upstream_version: int,
) -> dict[str, Any]:  # fmt: skip
    """One item of a manifest; `record` is the item as released (the public record)."""
    return {
        "key": key,
        "id": f"{task}/{record.get('id')}",
        "task": task,
        "content_sha256": sha256_of(record),
        "fields_sha256": {name: sha256_of(record.get(name))[:16] for name in FIELDS if name in record},
        "answer": record.get("answer"),
        "annotators": [a for a in annotators if a],
        "adjudicator": adjudicator,
        "settled_via": settled_via,
        "edited_by_experts": edited,
        "upstream_version": upstream_version,
    }


@dataclass
class ReleaseDraft:
    """What an export collected; numbered and stored by `record_release`."""

    kind: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    agreement: dict[str, Any] = field(default_factory=dict)
    reviewers: str = "pseudonyms"


def public_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest without the items' platform identities (the release's own ids name them) and,
    when it names reviewers by user name (`--with-reviewers`, for the internal folder), with only
    how many reviewed each item: a public release never names its reviewers."""
    named = manifest.get("reviewers") == "user names"

    def item(entry: dict[str, Any]) -> dict[str, Any]:
        public = {k: v for k, v in entry.items() if k != "key"}
        if named:
            public["annotators"] = len(entry.get("annotators") or [])
            public["adjudicator"] = entry.get("adjudicator") is not None
        return public

    agreement = manifest.get("agreement") or {}
    if named:
        agreement = {
            scope: {k: v for k, v in figures.items() if k not in ("by_pair", "by_task_and_pair")}
            for scope, figures in agreement.items()
        }
    return {**manifest, "reviewers": "counted" if named else manifest.get("reviewers"),
            "items": [item(e) for e in manifest["items"]], "agreement": agreement}  # fmt: skip


def record_release(db: Session, actor: Actor, draft: ReleaseDraft) -> tuple[Release, dict[str, Any]]:
    """Number the release (the next one, under a lock) and store it; returns the row and manifest."""
    if db.get_bind().dialect.name == "postgresql":
        db.execute(text("LOCK TABLE releases IN SHARE ROW EXCLUSIVE MODE"))
    number = int(db.scalar(select(func.max(Release.number))) or 0) + 1
    previous = db.scalar(select(Release).where(Release.number == number - 1))
    now = utc_now()
    entries = sorted(draft.entries, key=lambda e: e["id"])
    manifest = {
        "format": MANIFEST_FORMAT,
        "release": number,
        "previous_release": previous.number if previous else None,
        "created_at": now.isoformat(),
        "kind": draft.kind,
        "reviewers": draft.reviewers,
        "item_count": len(entries),
        "items": entries,
        "agreement": draft.agreement,
    }
    digest = sha256_of(manifest)
    row = Release(number=number, created_at=now, created_by=actor.name, kind=draft.kind, item_count=len(entries),
                  manifest=manifest, manifest_sha256=digest)  # fmt: skip
    db.add(row)
    db.flush()
    return row, manifest


def write_manifests(
    release_dir: Path, internal_dir: Path | None, manifest: dict[str, Any], digest: str
) -> None:
    """`release.json` into the release (public: no platform identities) and, when there is an
    internal folder, the whole manifest into it; with `--no-public`, the whole one into the release."""

    def write(path: Path, value: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    if internal_dir is None:
        write(release_dir / PUBLIC_MANIFEST, {**manifest, "manifest_sha256": digest})
        return
    write(release_dir / PUBLIC_MANIFEST, {**public_manifest(manifest), "internal_manifest_sha256": digest})
    write(internal_dir / INTERNAL_MANIFEST, {**manifest, "manifest_sha256": digest})


def list_releases(db: Session) -> list[Release]:
    return list(db.scalars(select(Release).order_by(Release.number)))


def release_item_ids(db: Session, release: Release) -> set[int]:
    """Ids of the platform items a release holds (matched by their stable identity)."""
    keys = [entry["key"] for entry in release.manifest.get("items", []) if "key" in entry]
    found: set[int] = set()
    for start in range(0, len(keys), 500):
        found |= set(db.scalars(select(Item.id).where(Item.key.in_(keys[start : start + 500]))))
    return found


def load_manifest(db: Session | None, ref: str) -> dict[str, Any]:
    """A release's manifest: by number from the database, or from a `release.json` / folder path."""
    if ref.isdigit() and db is not None:
        row = db.scalar(select(Release).where(Release.number == int(ref)))
        if row is None:
            raise NotFound(f"no release {ref} in this database")
        return dict(row.manifest)
    path = Path(ref)
    for candidate in (path, path / INTERNAL_MANIFEST, path / PUBLIC_MANIFEST):
        if candidate.is_file():
            try:
                manifest = json.loads(candidate.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as error:
                raise NotFound(f"{candidate}: not a release manifest ({error})") from None
            if isinstance(manifest, dict) and manifest.get("format") == MANIFEST_FORMAT:
                return manifest
            raise NotFound(f"{candidate}: not a release manifest (format {MANIFEST_FORMAT})")
    raise NotFound(f"{ref}: neither a release number nor a release folder or manifest")


@dataclass
class ReleaseDiff:
    old: int | None
    new: int | None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: id -> the fields that changed.
    changed: dict[str, list[str]] = field(default_factory=dict)
    #: id -> (old answer, new answer).
    answers: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    unchanged: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "from_release": self.old, "to_release": self.new,
            "counts": {"added": len(self.added), "removed": len(self.removed), "changed": len(self.changed),
                       "answers_changed": len(self.answers), "unchanged": self.unchanged},
            "added": self.added, "removed": self.removed,
            "changed": [{"id": k, "fields": v} for k, v in self.changed.items()],
            "answers_changed": [{"id": k, "from": a, "to": b} for k, (a, b) in self.answers.items()],
        }  # fmt: skip


def diff(old: dict[str, Any], new: dict[str, Any]) -> ReleaseDiff:
    """Items added, removed and changed from `old` to `new`. Items are matched by their stable
    identity when both manifests carry it (an id renumbered between builds is the same item), else
    by release id."""
    by_key = all("key" in e for e in old["items"]) and all("key" in e for e in new["items"])

    def index(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {e["key"] if by_key else e["id"]: e for e in manifest["items"]}

    before, after = index(old), index(new)
    result = ReleaseDiff(old.get("release"), new.get("release"))
    result.added = sorted(after[k]["id"] for k in after.keys() - before.keys())
    result.removed = sorted(before[k]["id"] for k in before.keys() - after.keys())
    for key in sorted(before.keys() & after.keys(), key=lambda k: after[k]["id"]):
        a, b = before[key], after[key]
        if a["content_sha256"] == b["content_sha256"]:
            result.unchanged += 1
            continue
        fields_a, fields_b = a.get("fields_sha256", {}), b.get("fields_sha256", {})
        names = sorted(n for n in set(fields_a) | set(fields_b) if fields_a.get(n) != fields_b.get(n))
        if a["id"] != b["id"]:
            names.insert(0, f"id (was {a['id']})")
        result.changed[b["id"]] = names or ["content"]
        if audit_chain.canonical(a.get("answer")) != audit_chain.canonical(b.get("answer")):
            result.answers[b["id"]] = (a.get("answer"), b.get("answer"))
    return result
