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


class ThrottlePolicy(BaseModel):
    """Login throttling: failed attempts counted in a sliding window, per user name and per address."""

    window_seconds: float = 900.0
    max_failures_per_user: int = 5
    max_failures_per_ip: int = 20


class PlatformSettings(BaseModel):
    database_url: str = Field(default_factory=default_database_url)
    #: Mark cookies `Secure` (set when served over HTTPS, e.g. behind a TLS proxy).
    secure_cookies: bool = False
    session_hours: float = Field(default=12.0, gt=0)
    passwords: PasswordPolicy = Field(default_factory=PasswordPolicy)
    throttle: ThrottlePolicy = Field(default_factory=ThrottlePolicy)
    #: Minimum characters of a justification; the paper requires one for every decision (appendix E).
    min_justification: int = Field(default=5, ge=1)
