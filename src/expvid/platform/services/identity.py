"""Item identities that survive rebuilds, moves and several candidate directories.

An item is known by its *identity key* (`Item.key`), never by its position in a file:

- the candidate directory's `uid` (provenance.jsonl; `expvid build` writes `<task>/<id>` with an
  experiment-namespaced, content-derived id, the same in every build of the campaign);
- for an older directory without uids, `dir-<12 hex of SHA-256 of its resolved path>:<task>/<id>`:
  its positional ids are only meaningful inside that directory, so two directories (two builds)
  never collide, and re-importing the same directory finds its items again;
- `platform:<task>/<id>` for a question an expert wrote on the platform (never "removed upstream").

`<task>/<id>` itself (the release key people and `expvid eval` know) is kept as `Item.release_key`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

PLATFORM_PREFIX = "platform:"
DIRECTORY_PREFIX = "dir-"
#: An uid may not look like a key the platform makes itself.
RESERVED_PREFIXES = (PLATFORM_PREFIX, DIRECTORY_PREFIX)
MAX_UID = 200


def directory_namespace(root: Path) -> str:
    """The identity namespace of a directory's items without uid (stable for one path)."""
    return DIRECTORY_PREFIX + hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:12]


def fallback_key(namespace: str, release_key: str) -> str:
    return f"{namespace}:{release_key}"


def platform_key(release_key: str) -> str:
    return PLATFORM_PREFIX + release_key


def family(key: str) -> str:
    """Which identity scheme a key belongs to: "" (uids), "platform", or a directory namespace.

    Only items of the scheme a directory uses can be "removed upstream" by importing it.
    """
    if key.startswith(PLATFORM_PREFIX):
        return "platform"
    if key.startswith(DIRECTORY_PREFIX) and ":" in key:
        return key.split(":", 1)[0]
    return ""


def uid_problem(uid: Any) -> str | None:
    """Why `uid` cannot be an identity, or None."""
    if not isinstance(uid, str) or not uid.strip():
        return "'uid' must be a non-empty string"
    if len(uid) > MAX_UID:
        return f"'uid' has {len(uid)} characters; at most {MAX_UID}"
    if "\x00" in uid or uid != uid.strip():
        return "'uid' has a NUL character or surrounding spaces"
    if uid.startswith(RESERVED_PREFIXES):
        return f"'uid' may not start with {' or '.join(RESERVED_PREFIXES)} (the platform's own keys)"
    return None


def fingerprint(*parts: Any) -> str:
    """SHA-256 of JSON values (sorted keys), for comparing what an import brings with what is stored."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def is_sha256(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
