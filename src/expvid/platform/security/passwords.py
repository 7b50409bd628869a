"""Password hashing with argon2id (argon2-cffi), with transparent re-hashing when costs change."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from expvid.platform.config import PasswordPolicy


class PasswordTooShort(ValueError):
    pass


class Passwords:
    def __init__(self, policy: PasswordPolicy) -> None:
        self.policy = policy
        self._hasher = PasswordHasher(
            time_cost=policy.time_cost, memory_cost=policy.memory_kib, parallelism=policy.parallelism
        )
        # Verifying against this dummy keeps the time of a login for an unknown user close to that of
        # a known user with a wrong password (no user-name oracle by timing).
        self._dummy = self._hasher.hash("expvid-dummy-password")

    def hash(self, password: str) -> str:
        if len(password) < self.policy.min_length:
            raise PasswordTooShort(f"password must have at least {self.policy.min_length} characters")
        return self._hasher.hash(password)

    def verify(self, stored_hash: str | None, password: str) -> bool:
        try:
            return self._hasher.verify(stored_hash or self._dummy, password) and stored_hash is not None
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored_hash: str) -> bool:
        return self._hasher.check_needs_rehash(stored_hash)
