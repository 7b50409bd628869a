"""Random tokens and their stored digests (sessions, CSRF)."""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """256 bits of randomness, URL-safe."""
    return secrets.token_urlsafe(32)


def digest(token: str) -> str:
    """What the database stores for a session token (the token itself only lives in the cookie)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same(a: str | None, b: str | None) -> bool:
    """Constant-time comparison; None never matches."""
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
