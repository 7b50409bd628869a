"""Platform settings: one object built by the CLI (or a test) and handed to `create_app`.

Why a plain pydantic model rather than environment magic: tests and the load benchmark build several
apps in one process against different databases, so settings must be values, not globals.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, Field

#: Default database: a SQLite file in the working directory, good for one reviewer or a small team
#: on one machine. Teams point `--db` (or EXPVID_PLATFORM_DB) at PostgreSQL.
DEFAULT_DATABASE_URL = "sqlite:///expvid-platform.db"
DATABASE_ENV = "EXPVID_PLATFORM_DB"


def default_database_url() -> str:
    return os.environ.get(DATABASE_ENV, DEFAULT_DATABASE_URL)


class PasswordPolicy(BaseModel):
    """argon2id cost parameters. The defaults are argon2-cffi's (RFC 9106 low-memory profile);
    tests lower them so that creating users does not dominate test time."""

    time_cost: int = Field(default=3, ge=1)
    memory_kib: int = Field(default=65536, ge=8)
    parallelism: int = Field(default=4, ge=1)
    min_length: int = Field(default=8, ge=1)
    #: Hashes computed at once (each takes `memory_kib`); more wait their turn (security/hashing.py).
    hash_slots: int = Field(default=1, ge=1, le=64)
    #: Sign-ins that may wait for a hashing slot; past that, a sign-in is answered 503 (Retry-After).
    hash_queue: int = Field(default=64, ge=0)
    #: CPU priority of the hashing threads (Linux nice, 0-19): a flood of sign-ins yields to saves.
    hash_nice: int = Field(default=19, ge=0, le=19)
    #: Largest share of its time a hashing slot computes (it rests in between): under a flood of
    #: sign-ins, argon2's memory traffic, which no CPU priority holds back, stays bounded too.
    hash_share: float = Field(default=0.5, gt=0, le=1)


class ThrottlePolicy(BaseModel):
    """Login throttling with growing delays, never a lockout.

    Failures count per (account, client address) since that pair's last successful sign-in, and per
    client address over all accounts; only failures within `window_seconds` count. After the free
    failures, each further attempt must wait `base_delay_seconds * 2**(extra - 1)` (at most
    `max_delay_seconds`) after the previous failure. A stranger guessing at an account from
    elsewhere therefore slows only themselves: its owner signs in from their own client at once.
    """

    window_seconds: float = Field(default=3600.0, gt=0)
    free_failures_per_pair: int = Field(default=5, ge=1)
    free_failures_per_client: int = Field(default=30, ge=1)
    base_delay_seconds: float = Field(default=2.0, gt=0)
    max_delay_seconds: float = Field(default=600.0, gt=0)


class InputLimits(BaseModel):
    """The most a reviewer may type into one field, in characters (after newlines are unified).

    Why: everything a reviewer submits is kept forever in the append-only audit trail, so a pasted
    50 MB log would be too. The forms carry the same limits (`maxlength`), the server checks them
    again (422 naming the field), and the request body as a whole is capped first (413).
    """

    justification: int = Field(default=4000, ge=10)
    question: int = Field(default=8000, ge=100)
    option: int = Field(default=2000, ge=10)
    answer: int = Field(default=500, ge=10)
    step_text: int = Field(default=600, ge=10)
    steps: int = Field(default=100, ge=1)
    reason: int = Field(default=2000, ge=10)
    search: int = Field(default=200, ge=10)


class PlatformSettings(BaseModel):
    database_url: str = Field(default_factory=default_database_url)
    #: Mark cookies `Secure` (set when served over HTTPS, e.g. behind a TLS proxy).
    secure_cookies: bool = False
    session_hours: float = Field(default=12.0, gt=0)
    passwords: PasswordPolicy = Field(default_factory=PasswordPolicy)
    throttle: ThrottlePolicy = Field(default_factory=ThrottlePolicy)
    #: Minimum characters of a justification; the paper requires one for every decision (appendix E).
    min_justification: int = Field(default=5, ge=1)
    #: Largest request body accepted (413 beyond it); keep nginx's `client_max_body_size` above it.
    max_body_bytes: int = Field(default=1 << 20, ge=1024)
    limits: InputLimits = Field(default_factory=InputLimits)
    #: Header a reverse proxy sets to the client's address (e.g. "X-Forwarded-For" or "X-Real-IP").
    #: Trusted only on connections from `trusted_proxies`; None = use the connection's address.
    proxy_header: str | None = None
    trusted_proxies: list[str] = Field(default_factory=lambda: ["127.0.0.1", "::1"])
